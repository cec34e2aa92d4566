#!/usr/bin/env python3
"""The docs runner (`make check-docs`, part of `make test`): every ```sh, ```bash and
```python block of README.md and docs/*.md runs, in page order, against one real
`anonauthd --dev` started once in a temporary directory. A block that fails fails the run.

The blocks run as a reader would run them: in one working directory (the temporary one,
with `anonauth-data` the daemon's data dir and `Protos/`, `Tests/`, `Scripts/`, `deploy/`
and `.build/` linked from the repository), `anonauth` and `anonauthd` on the PATH, and
the shell variables a block of a page sets seen by the page's later blocks (one terminal
per page). `pip install` runs offline against the test venv (PIP_NO_INDEX): the packages
are the ones `make interop-deps` installed.

A comment on the line before a block's fence tells the runner what it cannot see:

    <!-- docs-runner: skip REASON -->          not run here (Kubernetes, docker, a benchmark...); listed
    <!-- docs-runner: requires TOOL... -->     run only when each TOOL is on the PATH, else listed as skipped
    <!-- docs-runner: needs NAME... -->        the block uses NAME (a variable an earlier block of the page
                                               set, or a file in the working directory): checked first
    <!-- docs-runner: setup COMMAND -->        a shell command run first (a file the block reads)
    <!-- docs-runner: daemon --FLAG VALUE... -->  the block starts a daemon in the foreground: it is run
                                               with each FLAG's value replaced (DIR: a new directory),
                                               must print its ready line, and must exit 0 on SIGTERM

Several comments may precede one block. Usage: run_docs.py [--list] [FILE...].
"""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
LANGUAGES = {"sh": "sh", "bash": "sh", "shell": "sh", "python": "python", "python3": "python"}
MARKER = re.compile(r"^\s*<!--\s*docs-runner:\s*(\w+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
BLOCK_TIMEOUT_S = 90


class Block:
    def __init__(self, page, line, language, text, markers):
        self.page, self.line, self.language, self.text, self.markers = page, line, language, text, markers

    @property
    def where(self):
        return f"{self.page}:{self.line}"

    def marker(self, kind):
        return [value for k, value in self.markers if k == kind]


def parse(page: pathlib.Path, name: str):
    """The runnable blocks of a page, with the markers on the lines before each."""
    lines = page.read_text().split("\n")
    blocks = []
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        indent, language = match.group(1), match.group(2)
        end = index + 1
        while end < len(lines) and not FENCE.match(lines[end]):
            end += 1
        if language in LANGUAGES:
            markers = []
            before = index - 1
            while before >= 0 and (MARKER.match(lines[before]) or not lines[before].strip()):
                found = MARKER.match(lines[before])
                if found:
                    markers.insert(0, (found.group(1), found.group(2)))
                elif markers or before < index - 1:
                    break  # a blank line ends the markers that belong to this block
                before -= 1
            for kind, _ in markers:
                if kind not in ("skip", "requires", "needs", "setup", "daemon"):
                    raise SystemExit(f"{name}:{index + 1}: unknown docs-runner marker {kind!r}")
            body = "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip()
                             for line in lines[index + 1:end])
            blocks.append(Block(name, index + 1, LANGUAGES[language], body, markers))
        index = end + 1
    return blocks


def pages(arguments):
    if arguments:
        return [(ROOT / a, a) for a in arguments]
    return [(ROOT / "README.md", "README.md")] + [
        (p, f"docs/{p.name}") for p in sorted((ROOT / "docs").glob("*.md"))]


class Workspace:
    """The temporary directory the blocks run in, with the one daemon they share."""

    def __init__(self):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="anonauth-docs-"))
        for name in ("Protos", "Tests", "Scripts", "deploy", ".build"):
            (self.dir / name).symlink_to(ROOT / name)
        self.bin = self.dir / ".docs-bin"
        self.bin.mkdir()
        self.anonauthd = os.environ.get("ANONAUTHD", str(ROOT / ".build/debug/anonauthd"))
        cli = os.environ.get("ANONAUTH_CLI", str(ROOT / ".build/debug/anonauth"))
        (self.bin / "anonauthd").symlink_to(self.anonauthd)
        (self.bin / "anonauth").symlink_to(cli)
        # `python`, `python3` and `pip` are the test venv's (the interpreter running this;
        # its bin directory itself on the PATH: a link elsewhere would not find the venv).
        venv_bin = os.path.dirname(os.path.abspath(sys.executable))
        self.env = {**os.environ, "PATH": f"{self.bin}:{venv_bin}:{os.environ.get('PATH', '')}",
                    "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "HOME": str(self.dir)}
        for name in ("ANONAUTH_DATA_DIR", "ANONAUTH_RPC", "ANONAUTH_CA_FILE", "ANONAUTH_API_KEY",
                     "ANONAUTH_ADMIN_KEY_FILE", "PYTHONPATH"):
            self.env.pop(name, None)
        self.log = open(self.dir / "anonauthd.log", "w+")
        self.daemon = subprocess.Popen(
            [self.anonauthd, "--dev", "--data-dir", str(self.dir / "anonauth-data"), "--listen", "127.0.0.1:0",
             "--ops-listen", "127.0.0.1:0", "--log-level", "warn"],
            cwd=self.dir, stdout=subprocess.PIPE, stderr=self.log, text=True, env=self.env)
        line = self.daemon.stdout.readline()
        if not line or json.loads(line).get("event") != "ready":
            raise SystemExit("docs runner: the daemon did not start: " + self.log_text())
        self.ready = json.loads(line)

    def log_text(self):
        self.log.seek(0)
        return self.log.read()[-4000:]

    def close(self):
        if self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def run_shell(ws, env, script, timeout=BLOCK_TIMEOUT_S):
    """Runs `script` in bash (errexit, pipefail, every variable exported); returns
    (exit code, output, the environment it ended with)."""
    env_file = ws.dir / ".docs-env"
    env_file.unlink(missing_ok=True)
    wrapped = f"set -eo pipefail\nset -a\n{script}\nenv -0 > {env_file}\n"
    try:
        result = subprocess.run(["bash", "-c", wrapped], cwd=ws.dir, env=env, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        text = "".join(part.decode(errors="replace") if isinstance(part, bytes) else part
                       for part in (expired.stdout or "", expired.stderr or ""))
        return 124, f"timed out after {timeout} s\n{text}", env
    ended = env
    if result.returncode == 0 and env_file.exists():
        ended = dict(item.split("=", 1) for item in env_file.read_text().split("\0") if "=" in item)
    return result.returncode, result.stdout + result.stderr, ended


def run_daemon(ws, env, block, flags):
    """A block that starts a daemon in the foreground: run with FLAG values replaced, it
    must print its ready line and exit 0 on SIGTERM."""
    text = block.text
    words = flags.split()
    for flag, value in zip(words[::2], words[1::2]):
        if value == "DIR":
            value = tempfile.mkdtemp(prefix="docs-daemon-", dir=ws.dir)
        pattern = re.compile(rf"{re.escape(flag)}(=|\s+)\S+")
        if pattern.search(text):
            text = pattern.sub(lambda _: f"{flag} {value}", text, count=1)
        else:
            text = text.rstrip() + f" {flag} {value}"
    proc = subprocess.Popen(["bash", "-c", f"set -eo pipefail\nexec {text}"], cwd=ws.dir, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    output = []
    ready = None
    deadline = time.monotonic() + BLOCK_TIMEOUT_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        output.append(line)
        if line.startswith("{") and json.loads(line).get("event") == "ready":
            ready = line
            break
    if ready is None:
        proc.kill()
        proc.wait()
        return 1, "".join(output) + "\n(no ready line)"
    proc.send_signal(signal.SIGTERM)
    try:
        rest, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate()
    return proc.returncode, "".join(output) + (rest or "")


def main(argv):
    list_only = "--list" in argv
    files = [a for a in argv if a != "--list"]
    blocks = [b for path, name in pages(files) for b in parse(path, name)]
    if list_only:
        for b in blocks:
            print(b.where, b.language, b.markers)
        return 0
    started = time.monotonic()
    ws = Workspace()
    ran, skipped, failed = [], [], []
    try:
        page_env = {}
        for block in blocks:
            env = page_env.setdefault(block.page, dict(ws.env))
            reason = " ".join(block.marker("skip"))
            missing = [tool for value in block.marker("requires") for tool in value.split()
                       if shutil.which(tool, path=env["PATH"]) is None]
            if block.marker("skip"):
                skipped.append((block, reason or "(no reason given)"))
                continue
            if missing:
                skipped.append((block, f"needs {', '.join(missing)}, not installed here"))
                continue
            unmet = [name for value in block.marker("needs") for name in value.split()
                     if name not in env and not (ws.dir / name).exists()]
            if unmet:
                failed.append((block, f"needs {', '.join(unmet)}, which no earlier block set"))
                continue
            for command in block.marker("setup"):
                code, output, _ = run_shell(ws, env, command)
                if code != 0:
                    failed.append((block, f"setup `{command}` exited {code}:\n{output}"))
                    break
            else:
                began = time.monotonic()
                if block.marker("daemon"):
                    code, output = run_daemon(ws, env, block, block.marker("daemon")[0])
                    ended = env
                elif block.language == "sh":
                    code, output, ended = run_shell(ws, env, block.text)
                else:
                    script = ws.dir / ".docs-block.py"
                    script.write_text(block.text + "\n")
                    try:
                        result = subprocess.run([sys.executable, str(script)], cwd=ws.dir, env=env,
                                                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                                timeout=BLOCK_TIMEOUT_S)
                        code, output = result.returncode, result.stdout + result.stderr
                    except subprocess.TimeoutExpired:
                        code, output = 124, f"timed out after {BLOCK_TIMEOUT_S} s"
                    ended = env
                page_env[block.page] = ended
                took = time.monotonic() - began
                if code == 0:
                    ran.append(block)
                    print(f"ok    {block.where} ({took:.1f} s)")
                else:
                    failed.append((block, f"exited {code}:\n{output[-3000:]}"))
        if ws.daemon.poll() is not None:
            failed.append((blocks[-1], "the shared daemon exited: " + ws.log_text()))
    finally:
        ws.close()
    for block, reason in skipped:
        print(f"skip  {block.where}: {reason}")
    for block, why in failed:
        print(f"FAIL  {block.where}: {why}")
    print(f"docs runner: {len(ran)} blocks ran, {len(skipped)} skipped, {len(failed)} failed, of {len(blocks)}"
          f" ({time.monotonic() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
