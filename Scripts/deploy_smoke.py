#!/usr/bin/env python3
"""`make deploy-smoke`: proves deploy/Dockerfile's runtime stage is enough to run AnonAuth,
on a machine with no Docker engine.

It plays the runtime stage of the Dockerfile by hand, reading everything from the file
so that the two cannot drift apart:

1. builds the release binaries as the builder stage does (static Swift standard library);
2. debootstraps the stage's base (debian:bookworm-slim -> bookworm minbase), cached in
   .build-deploy/;
3. runs the stage's RUN lines in it with chroot (apt-get install of exactly its runtime
   packages, the user, /data), cached by the text of those lines;
4. copies the binaries in where the COPY line puts them;
5. gives it what a deployment gives: a TLS certificate and key, a master key and an admin
   key, at the paths the image's ENV names, readable by the image's USER only;
6. starts the ENTRYPOINT inside with chroot as that USER, with the image's ENV (not
   --dev; only the listen addresses move to loopback port 0), and waits for `ready`;
7. from outside, with the CLI: health, creates a project and an API key with the admin
   key, signs up anonymously, verifies the ID token with --check-revoked; reads /readyz
   and /metrics; runs the HEALTHCHECK command inside the root;
8. SIGTERM: the daemon must exit 0.

Needs root (debootstrap, chroot, mount) and network access to a Debian mirror
(ANONAUTH_DEBIAN_MIRROR, default http://deb.debian.org/debian). Standard library only.
"""

import hashlib
import json
import os
import re
import secrets
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, ".build-deploy")
DOCKERFILE = os.path.join(ROOT, "deploy", "Dockerfile")
SWIFT = os.environ.get("SWIFT", "swift")
MIRROR = os.environ.get("ANONAUTH_DEBIAN_MIRROR", "http://deb.debian.org/debian")
SCRATCH = os.path.join(ROOT, ".build-release")
STAMP = ".anonauth-ok"
PATH_IN_ROOT = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

START = time.monotonic()
TIMINGS = {}


def step(message):
    print(f"[deploy-smoke {time.monotonic() - START:6.1f}s] {message}", flush=True)


def timed(name, function, *args):
    began = time.monotonic()
    result = function(*args)
    TIMINGS[name] = round(time.monotonic() - began, 1)
    return result


def run(command, **kwargs):
    """Runs a command; on failure prints what it said and stops the smoke test."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        print(f"deploy-smoke: failed ({result.returncode}): {shlex.join(command)}", file=sys.stderr)
        print(result.stdout[-4000:], result.stderr[-4000:], sep="\n", file=sys.stderr)
        raise SystemExit(1)
    return result.stdout


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


# MARK: The Dockerfile's runtime stage


def instructions(path):
    """(KEYWORD, arguments) per instruction: comments dropped, continuations joined."""
    out, pending = [], ""
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            line, pending = pending + line, ""
            keyword, _, arguments = line.partition(" ")
            out.append((keyword.upper(), arguments.strip()))
    return out


def runtime_stage(path):
    """What the last stage of the Dockerfile does, in the terms this script plays."""
    steps = instructions(path)
    last_from = max(i for i, (keyword, _) in enumerate(steps) if keyword == "FROM")
    base = steps[last_from][1].split()[0]
    match = re.fullmatch(r"debian:(\w+)-slim", base)
    check(match is not None, f"the runtime stage's base {base!r} is not debian:<suite>-slim")
    stage = {"suite": match.group(1), "actions": [], "env": {}, "user": "0:0", "healthcheck": None,
             "entrypoint": None, "volumes": []}
    for keyword, arguments in steps[last_from + 1:]:
        if keyword == "RUN":
            check(not arguments.startswith("["), "RUN in exec form is not supported")
            stage["actions"].append(("run", arguments, dict(stage["env"])))
        elif keyword == "ENV":
            for pair in shlex.split(arguments):
                name, equals, value = pair.partition("=")
                check(equals == "=", f"ENV {arguments!r}: only NAME=VALUE pairs are supported")
                stage["env"][name] = value
        elif keyword == "COPY":
            words = shlex.split(arguments)
            check(words[0] == "--from=builder", f"COPY {arguments!r}: only --from=builder is supported")
            stage["actions"].append(("copy", words[1:-1], words[-1]))
        elif keyword == "USER":
            stage["user"] = arguments
        elif keyword == "HEALTHCHECK":
            check("CMD [" in arguments, "HEALTHCHECK must use CMD in exec form")
            stage["healthcheck"] = json.loads(arguments[arguments.index("CMD [") + 4:])
        elif keyword == "ENTRYPOINT":
            stage["entrypoint"] = json.loads(arguments)
        elif keyword == "VOLUME":
            stage["volumes"] = json.loads(arguments)
        elif keyword in ("EXPOSE", "STOPSIGNAL", "LABEL"):
            pass
        else:
            raise Failure(f"{keyword} in the runtime stage is not played by deploy-smoke: teach it")
    check(stage["entrypoint"], "the runtime stage has no ENTRYPOINT")
    return stage


def installed_packages(stage):
    """The packages the stage's apt-get install lines name (for the report)."""
    names = []
    for action in stage["actions"]:
        if action[0] != "run":
            continue
        for command in action[1].split("&&"):
            words = command.split()
            if "apt-get" in words and "install" in words:
                names += [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
    return names


# MARK: Roots


def mounted_under(path):
    with open("/proc/mounts") as f:
        points = [line.split()[1] for line in f]
    return sorted((p for p in points if p == path or p.startswith(path + "/")), reverse=True)


def remove_root(path):
    for point in mounted_under(path):
        subprocess.run(["umount", "-l", point], check=False)
    if os.path.exists(path):
        shutil.rmtree(path)


def base_root(suite):
    """bookworm minbase: what debian:bookworm-slim is made from. Cached."""
    root = os.path.join(CACHE, f"{suite}-minbase")
    if os.path.exists(os.path.join(root, STAMP)):
        step(f"base root: cached {os.path.relpath(root, ROOT)}")
        return root
    step(f"base root: debootstrap --variant=minbase {suite} (cold cache)")
    work = root + ".tmp"
    remove_root(work)
    remove_root(root)
    run(["debootstrap", "--variant=minbase", suite, work, MIRROR])
    open(os.path.join(work, STAMP), "w").close()
    os.rename(work, root)
    return root


def runtime_root(base, stage):
    """The base after the stage's RUN lines. Cached by their text (and the base)."""
    runs = [a for a in stage["actions"] if a[0] == "run"]
    key = hashlib.sha256(json.dumps([stage["suite"], [[a[1], a[2]] for a in runs]]).encode()).hexdigest()[:12]
    root = os.path.join(CACHE, f"runtime-{key}")
    if os.path.exists(os.path.join(root, STAMP)):
        step(f"runtime root: cached {os.path.relpath(root, ROOT)} (the Dockerfile's RUN lines are unchanged)")
        return root
    for name in os.listdir(CACHE):
        if name.startswith("runtime-"):
            remove_root(os.path.join(CACHE, name))  # made from other RUN lines
    work = root + ".tmp"
    remove_root(work)
    run(["cp", "-a", base, work])
    os.remove(os.path.join(work, STAMP))
    for _, command, env in runs:
        step(f"runtime root: RUN {command[:90]}{'...' if len(command) > 90 else ''}")
        environment = {"PATH": PATH_IN_ROOT, "HOME": "/root", **env}
        run(["chroot", work, "/bin/sh", "-c", command], env=environment)
    open(os.path.join(work, STAMP), "w").close()
    os.rename(work, root)
    return root


# MARK: The smoke test


def build_binaries():
    for product in ("anonauthd", "anonauth"):
        run([SWIFT, "build", "-c", "release", "--static-swift-stdlib", "--scratch-path", SCRATCH,
             "--product", product], cwd=ROOT)
    return run([SWIFT, "build", "-c", "release", "--static-swift-stdlib", "--scratch-path", SCRATCH,
                "--show-bin-path"], cwd=ROOT).strip()


def install_binaries(root, stage, bin_dir):
    for action in stage["actions"]:
        if action[0] != "copy":
            continue
        sources, destination = action[1], action[2]
        for source in sources:
            name = os.path.basename(source)
            target = os.path.join(root, destination.lstrip("/"))
            if destination.endswith("/"):
                target = os.path.join(target, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(bin_dir, name), target)
            os.chmod(target, 0o755)


def give_secrets(root, env, user, host_dir):
    """What a deployment gives: files at the paths the image's ENV names, owned by root
    and readable by the image's group (as a Kubernetes Secret with fsGroup)."""
    cert, key = os.path.join(host_dir, "tls.crt"), os.path.join(host_dir, "tls.key")
    run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=anonauth.smoke.test",
         "-addext", "subjectAltName=DNS:anonauth.smoke.test,DNS:localhost,IP:127.0.0.1"])
    with open(os.path.join(host_dir, "master.key"), "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    admin_key = secrets.token_hex(32)
    with open(os.path.join(host_dir, "admin.key"), "w") as f:
        f.write(admin_key + "\n")
    os.chmod(os.path.join(host_dir, "admin.key"), 0o600)
    gid = int(user.split(":")[1]) if ":" in user else int(user)
    placed = {
        env["ANONAUTH_TLS_CERT"]: cert, env["ANONAUTH_TLS_KEY"]: key,
        env["ANONAUTH_MASTER_KEY_FILE"]: os.path.join(host_dir, "master.key"),
        env["ANONAUTH_ADMIN_KEY_FILE"]: os.path.join(host_dir, "admin.key"),
    }
    for inside, outside in placed.items():
        target = os.path.join(root, inside.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy(outside, target)
        os.chown(target, 0, gid)
        os.chmod(target, 0o440)
    return cert, os.path.join(host_dir, "admin.key")


def read_line(stream, timeout):
    deadline = time.monotonic() + timeout
    data = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.2)
        if ready:
            chunk = os.read(stream.fileno(), 1)
            if not chunk:
                break
            if chunk == b"\n":
                return data.decode()
            data += chunk
    return None


def http_get(address, path):
    try:
        with urllib.request.urlopen(f"http://{address}{path}", timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def smoke(root, stage, bin_dir, host_dir):
    env = {"PATH": PATH_IN_ROOT, **stage["env"]}
    env.setdefault("ANONAUTH_ADMIN_KEY_FILE", "/etc/anonauth/keys/admin.key")
    cert, admin_key_file = give_secrets(root, env, stage["user"], host_dir)
    # Loopback and port 0 instead of the image's 0.0.0.0:7443: this shares the host's network.
    env.update({"ANONAUTH_LISTEN": "127.0.0.1:0", "ANONAUTH_OPS_LISTEN": "127.0.0.1:0"})
    check("--dev" not in stage["entrypoint"], "the ENTRYPOINT must not use --dev")

    if not os.path.exists(os.path.join(root, "proc", "self")):
        subprocess.run(["mount", "-t", "proc", "proc", os.path.join(root, "proc")], check=False)
    log_path = os.path.join(host_dir, "anonauthd.log")
    log = open(log_path, "w+")
    userspec = f"--userspec={stage['user']}"
    step(f"starting {shlex.join(stage['entrypoint'])} in the root as {stage['user']} (not --dev)")
    daemon = subprocess.Popen(["chroot", userspec, root, *stage["entrypoint"]], env=env,
                              stdout=subprocess.PIPE, stderr=log)
    try:
        began = time.monotonic()
        line = read_line(daemon.stdout, 60)
        check(line is not None, "no ready line within 60 s")
        ready = json.loads(line)
        check(ready.get("event") == "ready" and ready.get("dev") is False, f"unexpected first line: {line}")
        TIMINGS["daemon_ready"] = round(time.monotonic() - began, 1)
        step(f"ready: rpc {ready['rpc']}, ops {ready['ops']}")
        with open(f"/proc/{daemon.pid}/status") as f:
            uid = next(l.split()[1] for l in f if l.startswith("Uid:"))
        check(uid == stage["user"].split(":")[0], f"the daemon runs as uid {uid}, not the image's USER")

        cli = os.path.join(bin_dir, "anonauth")
        connect = ["--rpc", ready["rpc"], "--ca-file", cert, "--timeout-ms", "10000"]
        session = os.path.join(host_dir, "session.json")

        def outside(*arguments):
            return run([cli, *arguments, *connect], cwd=host_dir).strip()

        check(outside("health") == "SERVING", "health is not SERVING")
        unverified = subprocess.run([cli, "health", "--rpc", ready["rpc"]], capture_output=True, text=True)
        check(unverified.returncode != 0, "a client that does not trust the certificate got through")
        check(outside("admin", "create-project", "smoke-project", "--anonymous", "--admin-key-file",
                      admin_key_file) == "smoke-project", "create-project")
        api_key = outside("admin", "create-api-key", "smoke-project", "--admin-key-file", admin_key_file)
        uid_signed_up = outside("signin-anonymously", "--api-key", api_key, "--session", session)
        check(len(uid_signed_up) == 28, f"signin-anonymously printed {uid_signed_up!r}")
        token = outside("token", "--api-key", api_key, "--session", session)
        verified = json.loads(outside("verify", token, "--check-revoked", "--json", "--api-key", api_key))
        check(verified["uid"] == uid_signed_up and verified["project_id"] == "smoke-project", f"verify: {verified}")
        step(f"signed up {uid_signed_up} from outside and verified its ID token")

        status, _ = http_get(ready["ops"], "/readyz")
        check(status == 200, f"/readyz is {status}")
        status, metrics = http_get(ready["ops"], "/metrics")
        check('anonauth_sign_ups_total{provider="anonymous"} 1' in metrics, "/metrics lacks the sign-up")

        if stage["healthcheck"]:
            health_env = {**env, "ANONAUTH_RPC": ready["rpc"]}
            result = subprocess.run(["chroot", userspec, root, *stage["healthcheck"]], env=health_env,
                                    capture_output=True, text=True)
            check(result.returncode == 0 and "SERVING" in result.stdout,
                  f"HEALTHCHECK {stage['healthcheck']} failed: {result.stdout} {result.stderr}")
            step(f"HEALTHCHECK {shlex.join(stage['healthcheck'])} inside the root: SERVING")

        for binary in ("anonauthd", "anonauth"):
            libraries = run(["chroot", root, "ldd", f"/usr/local/bin/{binary}"])
            check("not found" not in libraries, f"{binary} misses libraries in the root:\n{libraries}")

        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(timeout=40)
        check(code == 0, f"anonauthd exited {code} after SIGTERM")
        data = os.path.join(root, "data")
        check(os.path.exists(os.path.join(data, "anonauth.db")), "no store in /data")
        check(os.stat(data).st_mode & 0o077 == 0, "/data is not 0700")
        step("SIGTERM: drained and exited 0")
    except (Failure, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as error:
        log.seek(0)
        print(f"deploy-smoke: FAILED: {error}\n--- anonauthd stderr ---\n{log.read()[-6000:]}", file=sys.stderr)
        raise SystemExit(1)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        subprocess.run(["umount", "-l", os.path.join(root, "proc")], check=False, capture_output=True)


def clean():
    """Removes the cache, unmounting what an interrupted run may have left mounted."""
    if os.path.isdir(CACHE):
        for name in os.listdir(CACHE):
            path = os.path.join(CACHE, name)
            if os.path.isdir(path):
                remove_root(path)
        shutil.rmtree(CACHE, ignore_errors=True)
    return 0


def main():
    if sys.argv[1:] == ["--clean"]:
        return clean()
    if os.geteuid() != 0:
        print("deploy-smoke: needs root (debootstrap, chroot, mount)", file=sys.stderr)
        return 1
    if shutil.which("debootstrap") is None:
        step("installing debootstrap")
        run(["apt-get", "update", "-qq"])
        run(["apt-get", "install", "-y", "-qq", "debootstrap"], env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    os.makedirs(CACHE, exist_ok=True)
    try:
        stage = runtime_stage(DOCKERFILE)
    except Failure as error:
        print(f"deploy-smoke: deploy/Dockerfile: {error}", file=sys.stderr)
        return 1
    step(f"runtime stage: debian:{stage['suite']}-slim + {' '.join(installed_packages(stage))}")
    step("building release binaries (static Swift standard library), as the builder stage does")
    bin_dir = timed("release_build", build_binaries)
    base = timed("base_root", base_root, stage["suite"])
    runtime = timed("runtime_root", runtime_root, base, stage)
    run_root = os.path.join(CACHE, "run")

    def fresh_copy():
        remove_root(run_root)
        run(["cp", "-a", runtime, run_root])
        install_binaries(run_root, stage, bin_dir)

    timed("copy_root", fresh_copy)
    host_dir = tempfile.mkdtemp(prefix="anonauth-deploy-smoke-")
    try:
        timed("smoke", smoke, run_root, stage, bin_dir, host_dir)
    finally:
        shutil.rmtree(host_dir, ignore_errors=True)
    TIMINGS["total"] = round(time.monotonic() - START, 1)
    with open(os.path.join(CACHE, "last-timings.json"), "w") as f:
        json.dump(TIMINGS, f, indent=1)
    step(f"passed; seconds: {json.dumps(TIMINGS)}")
    print("deploy-smoke: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
