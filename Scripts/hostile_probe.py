#!/usr/bin/env python3
"""Each abuser of Tests/Interop/abuse.py alone (and all of them at once) beside the
hostile suite's well-behaved client, against a fresh release daemon each: the client's
p99 without and with the abuse, their ratio (the goal is 2x), the daemon's peak resident
memory over its baseline during the abuse (the goal is under 256 MiB for one attacker),
how long the daemon's event-loop turns were meanwhile (from /metrics), and, over the
measured 6 s of abuse, how many attacks the abusers made, the daemon's CPU seconds and
the abusers' own. The password-pool attacker is measured against a bystander signing in
with a password; every other one against VerifyIdToken calls.

Then the HTTP/2 attacks of issue 35 (Tests/Interop/abuse_h2.py), each against a fresh
release daemon with its default flags, held about 10 s: the zero-window reflection flood
(1, 16 and 64 connections from one address), the blocked-stream CPU case (one such
connection, measured alone for 10 s), the repeated HPACK bomb (one connection; 64 from 8
addresses) and the unknown-path log flood (8 connections). For each: the bytes the
attacker sent, the daemon's peak resident memory over its baseline and what is left 30 s
after the attack ended (and how long it took to come within 64 MiB), the daemon's CPU
seconds per second while held (in a window with no bystander running), the bystander's
p99 during the attack against quiet (a native health check at 200 calls/s on 2
connections; `H2_BYSTANDER=verify` for VerifyIdToken), and what the daemon wrote to
stderr. The issue's goals are printed beside each figure; a `!` marks one missed.

    .build-venv/bin/python Scripts/hostile_probe.py [ABUSER | SCENARIO ...] [all] [h2]
        (default: each abuser, then all, then every HTTP/2 scenario; `h2`: the HTTP/2
        scenarios only; SCENARIO: one of them by name, e.g. h2-hpack-bomb-1)
    make bench-hostile                                      (builds release binaries first)
    ANONAUTHD=/path/to/anonauthd .build-venv/bin/python Scripts/hostile_probe.py h2
        (another build; its `anonauth` CLI beside it is the bystander)

H2_ATTACKER_NICE=N runs the HTTP/2 attackers' threads at nice N, and
H2_ISOLATE_ATTACKER=1 on the last core, the daemon and its bystander on the others (a
remote attacker's CPU is not the daemon's machine's). PROBE_DAEMON_ARGS adds daemon flags (`PROBE_DAEMON_ARGS="--io-threads 2"`); name `all`
several times to see how much the ratio moves between runs. The abusers run under
SCHED_IDLE; `ABUSE_SCHED=nice` runs them at nice 19 instead (see abuse._demoted). The
HTTP/2 attackers run at normal priority: they need little CPU (their own is printed),
and an idle-class attacker would hardly run on a machine busy with builds.

A measurement, not a test: the machine's noise moves the figures by tens of percent."""

import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections import namedtuple

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "Interop"))
os.environ.setdefault("ANONAUTHD", str(ROOT / ".build/release/anonauthd"))
import abuse  # noqa: E402
import abuse_h2  # noqa: E402
from conftest import Daemon, call, load_pb  # noqa: E402

CLI = str(pathlib.Path(os.environ["ANONAUTHD"]).with_name("anonauth"))


def well_behaved(daemon, seconds, kind="verify"):
    return abuse.well_behaved(CLI, daemon, seconds, kind)


def metrics(daemon):
    return urllib.request.urlopen(f"http://{daemon.ops[0]}:{daemon.ops[1]}/metrics", timeout=5).read().decode()


def loop_turns(daemon):
    """(turns over 2.5 ms, over 10 ms, the longest in ms) of the connection loops
    (`anonauth-io-N`, summed) so far."""
    buckets, longest = {}, 0.0
    for line in metrics(daemon).splitlines():
        if 'loop="anonauth-io-' not in line:
            continue
        if line.startswith("anonauth_event_loop_turn_seconds_bucket"):
            le = line.split('le="')[1].split('"')[0]
            buckets[le] = buckets.get(le, 0.0) + float(line.split()[1])
        elif line.startswith("anonauth_event_loop_turn_max_seconds"):
            longest = max(longest, float(line.split()[1]) * 1000)
    total = buckets["+Inf"]
    return total - buckets["0.0025"], total - buckets["0.01"], longest


def daemon_cpu_seconds(daemon):
    """The daemon's CPU seconds so far (`process_cpu_seconds_total`)."""
    for line in metrics(daemon).splitlines():
        if line.startswith("process_cpu_seconds_total "):
            return float(line.split()[1])
    return 0.0


def own_cpu_seconds():
    """This process's CPU seconds so far: the abusers' threads (the measured client is a
    process of its own)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def probe(pb, name):
    daemon = Daemon(extra=["--log-level", "warn"] + os.environ.get("PROBE_DAEMON_ARGS", "").split())
    try:
        sock = daemon.connect()
        # The suite's small per-IP sign-up quota, so the email abuser is over it at once.
        config = pb.admin.ProjectConfig(project_id="demo-project", sign_up_quota_per_hour=5)
        call(sock, pb, "/anonauth.v1.AdminService/UpdateProjectConfig",
             pb.admin.UpdateProjectConfigRequest(config=config, update_mask=["sign_up_quota_per_hour"]),
             pb.admin.ProjectConfig, metadata={"authorization": "Bearer " + daemon.client_json["admin_key"]})
        sock.close()
        abusers = abuse.ALL if name == "all" else [getattr(abuse, name)]
        kind = abuse.bystander_of(abusers[0]) if len(abusers) == 1 else "verify"
        well_behaved(daemon, 2, kind)  # warm-up
        baseline = abuse.rss_bytes(daemon.proc.pid)
        quiet = well_behaved(daemon, 6, kind)
        before = loop_turns(daemon)
        peak = abuse.PeakRSS(daemon.proc.pid)
        stop, threads, tally = abuse.start(daemon, pb, abusers)
        time.sleep(2)
        acts, cpu, own = sum(tally.counts.values()), daemon_cpu_seconds(daemon), own_cpu_seconds()
        loaded = well_behaved(daemon, 6, kind)
        acts, cpu = sum(tally.counts.values()) - acts, daemon_cpu_seconds(daemon) - cpu
        own = own_cpu_seconds() - own
        after = loop_turns(daemon)
        peak_mib = (peak.stop() - baseline) / (1 << 20)
        stop.set()
        for t in threads:
            t.join(timeout=60)
    finally:
        daemon.stop()
    failed = "" if loaded["failures"] == 0 else f"  ({loaded['failures']} of {loaded['calls']} calls failed)"
    print(f"{name:22} {kind:8} {quiet['p99_ms']:7.2f} {loaded['p99_ms']:8.2f} {loaded['p99_ms'] / quiet['p99_ms']:6.2f}x "
          f"{peak_mib:8.1f} {after[0] - before[0]:9.0f} {after[1] - before[1]:8.0f} {after[2]:10.1f} {acts:8d} "
          f"{cpu:10.2f} {own:10.2f}{failed}", flush=True)


# --- the HTTP/2 attacks of issue 35 ---------------------------------------------------------

MIB = 1 << 20
# The goals (issue 35, item 6).
PEAK_GOAL_MIB = 256
SETTLED_GOAL_MIB = 64
SETTLE_SECONDS = 30
STREAM_CPU_GOAL = 0.001  # CPU-s per second for one held blocked stream
BLOCK_CPU_GOAL_MS = 1.0  # CPU for one refused header block
ADDRESS_CPU_GOAL = 0.5  # CPU-s per second one address may keep busy
P99_GOAL = 2.0
BYSTANDER_SECONDS = 6

# make: the attack for a daemon; addresses: how many source addresses it uses; window: the
# seconds of daemon CPU measured while held, before the bystander runs beside the attack.
Scenario = namedtuple("Scenario", "what make addresses window")


def _sources(prefix, count):
    return tuple(f"{prefix}.{i}" for i in range(1, count + 1))


def _zero_window(connections):
    return Scenario(
        f"{connections} connection(s) from one address, SETTINGS_INITIAL_WINDOW_SIZE 0, 120 reflection streams x "
        f"8 file_containing_symbol({abuse_h2.REFLECTION_SYMBOL})",
        lambda d: abuse_h2.ZeroWindowReflection(d, connections, sources=("127.0.0.31",)), 1, 4)


H2_SCENARIOS = {
    "h2-zero-window-1": _zero_window(1),
    "h2-zero-window-16": _zero_window(16),
    "h2-zero-window-64": _zero_window(64),
    "h2-blocked-stream-cpu": Scenario(
        "1 connection, 120 blocked reflection streams x 8 requests, daemon CPU over 10 s alone",
        lambda d: abuse_h2.ZeroWindowReflection(d, 1, sources=("127.0.0.32",)), 1, 10),
    "h2-blocked-stream-cpu-1msg": Scenario(
        "the same with 1 request per stream (one answer queued on each)",
        lambda d: abuse_h2.ZeroWindowReflection(d, 1, messages=1, sources=("127.0.0.33",)), 1, 10),
    "h2-hpack-bomb-1": Scenario(
        f"1 connection, a 16 KB block with {abuse_h2.bomb_references()} references to a 4,000-byte field per stream",
        lambda d: abuse_h2.HpackBomb(d, 1, sources=("127.0.0.41",), seconds=60), 1, 4),
    "h2-hpack-bomb-64x8": Scenario(
        "64 connections from 8 addresses, the same blocks",
        lambda d: abuse_h2.HpackBomb(d, 64, sources=_sources("127.0.4", 8), seconds=60), 8, 4),
    "h2-log-flood": Scenario(
        f"8 connections from one address, gRPC calls to {abuse_h2.UNKNOWN_PATH} as fast as answered",
        lambda d: abuse_h2.UnknownPathFlood(d, 8, sources=("127.0.0.51",), seconds=60), 1, 4),
}


def bystander(daemon, seconds):
    """The client measured beside an HTTP/2 attack: a native health check at 200 calls/s on
    2 connections from 127.0.0.1 (the issue's review measured a health check), or
    VerifyIdToken as the abusers' probe does with `H2_BYSTANDER=verify`. Its `--json`
    report."""
    if os.environ.get("H2_BYSTANDER") == "verify":
        return well_behaved(daemon, seconds)
    result = subprocess.run(
        [CLI, "bench", "health", "--rate", "200", "--connections", "2", "--seconds", str(seconds), "--json",
         "--allow-failures", "--data-dir", daemon.dir, "--rsa-signs-per-second", "1"],
        capture_output=True, text=True, timeout=120,
        preexec_fn=(lambda: os.sched_setaffinity(0, _serving_cpus())) if _isolating() else None)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def proc_cpu_seconds(pid):
    """A process's CPU seconds so far (user and system, all threads) from /proc: no call
    to the daemon, so reading it costs the daemon nothing."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def log_size(daemon):
    return os.path.getsize(daemon.log_path)


def log_lines_since(daemon, offset, needle):
    """(lines, lines containing `needle`) the daemon wrote to stderr after `offset`."""
    lines = hits = 0
    with open(daemon.log_path, "rb") as f:
        f.seek(offset)
        for line in f:
            lines += 1
            hits += needle in line
    return lines, hits


def settle(pid, baseline):
    """Polls resident memory for SETTLE_SECONDS after an attack: (seconds until it was
    within SETTLED_GOAL_MIB of `baseline`, or None, and the bytes at the end)."""
    began = time.monotonic()
    within = None
    while True:
        now = time.monotonic() - began
        rss = abuse.rss_bytes(pid)
        if within is None and rss - baseline <= SETTLED_GOAL_MIB * MIB:
            within = now
        if now >= SETTLE_SECONDS:
            return within, rss
        time.sleep(0.5)


def _renice_attack_threads():
    """Every thread of this process but the main one (the attack's; threads they start
    later inherit it) runs at nice N with `H2_ATTACKER_NICE=N`, and on the last core
    with `H2_ISOLATE_ATTACKER=1` (the daemon and the bystander then run on the others):
    on a machine of two cores the attacker's own CPU otherwise competes with the daemon
    and the bystander, which a remote attacker's does not."""
    nice = os.environ.get("H2_ATTACKER_NICE")
    main = threading.main_thread().native_id
    for task in os.listdir("/proc/self/task"):
        if int(task) == main:
            continue
        if nice:
            os.setpriority(os.PRIO_PROCESS, int(task), int(nice))
        if _isolating():
            os.sched_setaffinity(int(task), {_attacker_cpu()})


def _isolating():
    return os.environ.get("H2_ISOLATE_ATTACKER") == "1" and len(os.sched_getaffinity(0)) > 1


def _attacker_cpu():
    return max(os.sched_getaffinity(0))


def _serving_cpus():
    """Where the daemon and the bystander run when the attacker is isolated."""
    return os.sched_getaffinity(0) - {_attacker_cpu()}


def _turns_since(now, before):
    """Turns over 2.5 ms and over 10 ms between two `loop_turns` readings."""
    return now[0] - before[0], now[1] - before[1]


def _answered(counts):
    return sum(v for k, v in counts.items() if k.startswith(("answered", "RST_STREAM")))


def probe_h2(name):
    """One HTTP/2 scenario against a fresh daemon with its default flags; returns its row."""
    spec = H2_SCENARIOS[name]
    daemon = Daemon(extra=os.environ.get("PROBE_DAEMON_ARGS", "").split())
    if _isolating():
        for task in os.listdir(f"/proc/{daemon.proc.pid}/task"):
            os.sched_setaffinity(int(task), _serving_cpus())
    pid = daemon.proc.pid
    try:
        bystander(daemon, 2)  # warm-up
        c0, t0 = proc_cpu_seconds(pid), time.monotonic()
        time.sleep(3)
        idle = (proc_cpu_seconds(pid) - c0) / (time.monotonic() - t0)
        baseline = abuse.rss_bytes(pid)
        turns0 = loop_turns(daemon)
        quiet = bystander(daemon, BYSTANDER_SECONDS)
        turns_quiet = _turns_since(loop_turns(daemon), turns0)
        log0 = log_size(daemon)
        peak = abuse.PeakRSS(pid)
        began = time.monotonic()
        attack = spec.make(daemon).start()
        _renice_attack_threads()
        setup = time.monotonic() - began
        counts0, _ = attack.snapshot()
        c0, t0, own0 = proc_cpu_seconds(pid), time.monotonic(), own_cpu_seconds()
        time.sleep(spec.window)
        counts1, _ = attack.snapshot()
        held = time.monotonic() - t0
        cpu_rate = (proc_cpu_seconds(pid) - c0) / held
        own_rate = (own_cpu_seconds() - own0) / held
        # The attack is held for the bystander's seconds and then ends, whatever the
        # bystander's late answers do (under some attacks they take tens of seconds).
        measured = {}
        turns0 = loop_turns(daemon)
        client = threading.Thread(target=lambda: measured.update(bystander(daemon, BYSTANDER_SECONDS)))
        client.start()
        client.join(BYSTANDER_SECONDS + 1)
        turns_attacked = _turns_since(loop_turns(daemon), turns0)
        attack.stop()
        held_total = time.monotonic() - began
        client.join()
        assert measured, "the bystander failed (its error is above)"
        loaded = measured
        counts, sent = attack.snapshot()
        peak_rss = peak.stop()
        within, settled = settle(pid, baseline)
        log_bytes = log_size(daemon) - log0
        lines, hits = log_lines_since(daemon, log0, abuse_h2.UNKNOWN_PATH.encode())
        alive = daemon.proc.poll() is None
    finally:
        daemon.stop()
        shutil.rmtree(daemon.dir, ignore_errors=True)
        try:
            os.unlink(daemon.log_path)
        except OSError:
            pass
    blocks = _answered(counts1) - _answered(counts0)
    streams = counts.get("streams", 0)
    row = dict(
        name=name, what=spec.what, addresses=spec.addresses, sent=sent, counts=counts, setup=setup,
        held=held_total, baseline=baseline, peak=(peak_rss - baseline) / MIB, settled=(settled - baseline) / MIB,
        within=within, cpu=cpu_rate, idle=idle, own=own_rate, window=held,
        per_stream=(cpu_rate - idle) / streams if isinstance(attack, abuse_h2.ZeroWindowReflection) and streams
        else None,
        per_block_ms=(cpu_rate - idle) * held / blocks * 1000 if isinstance(attack, abuse_h2.HpackBomb) and blocks
        else None,
        blocks_in_window=blocks, quiet=quiet, loaded=loaded, log_bytes=log_bytes, lines=lines, hits=hits,
        alive=alive, turns_quiet=turns_quiet, turns_attacked=turns_attacked)
    print_h2_detail(row)
    return row


def _mark(ok):
    return "" if ok else " !"


def print_h2_detail(r):
    """One scenario's figures as they come, each beside its goal."""
    q, lo = r["quiet"], r["loaded"]
    ratio = lo["p99_ms"] / q["p99_ms"] if q["p99_ms"] else float("inf")
    per_address = r["cpu"] / r["addresses"]
    within = f"{r['within']:.1f} s" if r["within"] is not None else f"not within {SETTLE_SECONDS} s"
    print(f"\n== {r['name']}: {r['what']}", flush=True)
    print(f"  attack             {dict(r['counts'])}")
    print(f"  attacker sent      {r['sent'] / 1e6:.2f} MB (HTTP/2 bytes before TLS); set-up {r['setup']:.1f} s, "
          f"held {r['held']:.1f} s; attacker CPU {r['own']:.2f} CPU-s/s")
    print(f"  daemon RSS         baseline {r['baseline'] / MIB:.1f} MiB, peak +{r['peak']:.1f} MiB "
          f"(goal <= +{PEAK_GOAL_MIB}){_mark(r['peak'] <= PEAK_GOAL_MIB)}, "
          f"{SETTLE_SECONDS} s after +{r['settled']:.1f} MiB (goal <= +{SETTLED_GOAL_MIB})"
          f"{_mark(r['settled'] <= SETTLED_GOAL_MIB)}; within {SETTLED_GOAL_MIB} MiB after {within}")
    print(f"  daemon CPU held    {r['cpu']:.3f} CPU-s/s over {r['window']:.1f} s without bystander "
          f"(idle {r['idle']:.3f}); per address {per_address:.3f} (goal <= {ADDRESS_CPU_GOAL})"
          f"{_mark(per_address <= ADDRESS_CPU_GOAL)}")
    if r["per_stream"] is not None:
        print(f"  per held stream    {r['per_stream']:.5f} CPU-s/s above idle (goal < {STREAM_CPU_GOAL})"
              f"{_mark(r['per_stream'] < STREAM_CPU_GOAL)}")
    if r["per_block_ms"] is not None:
        print(f"  per refused block  {r['per_block_ms']:.2f} ms CPU above idle over {r['blocks_in_window']} blocks "
              f"answered (goal < {BLOCK_CPU_GOAL_MS} ms){_mark(r['per_block_ms'] < BLOCK_CPU_GOAL_MS)}")
    print(f"  bystander p99      quiet {q['p99_ms']:.2f} ms, attacked {lo['p99_ms']:.2f} ms: {ratio:.2f}x "
          f"(goal <= {P99_GOAL:.0f}x){_mark(ratio <= P99_GOAL)}; failures {lo['failures']} of {lo['calls']}")
    (q25, q10), (a25, a10) = r["turns_quiet"], r["turns_attacked"]
    print(f"  loop turns         over 2.5 ms / over 10 ms while the bystander ran: quiet {q25:.0f} / {q10:.0f}, "
          f"attacked {a25:.0f} / {a10:.0f}")
    print(f"  daemon stderr      {r['log_bytes'] / 1e6:.2f} MB, {r['lines']} lines "
          f"({r['hits']} naming {abuse_h2.UNKNOWN_PATH})" + ("" if r["alive"] else "; THE DAEMON DIED"), flush=True)


def print_h2_table(rows):
    """Every scenario on one line, goals in the header; `!` marks a missed goal."""
    print(f"\n| scenario | sent MB | peak +MiB (<= {PEAK_GOAL_MIB}) | +MiB {SETTLE_SECONDS} s after (<= "
          f"{SETTLED_GOAL_MIB}) | within {SETTLED_GOAL_MIB} MiB after | CPU-s/s held (<= {ADDRESS_CPU_GOAL} per "
          f"address) | per stream (< {STREAM_CPU_GOAL}) | ms CPU per refused block (< {BLOCK_CPU_GOAL_MS:g}) | "
          f"bystander p99 ms quiet / attacked (<= {P99_GOAL:g}x) | stderr MB (lines) | attack |")
    print("|" + "---|" * 11)
    for r in rows:
        q, lo = r["quiet"]["p99_ms"], r["loaded"]["p99_ms"]
        ratio = lo / q if q else float("inf")
        per_address = r["cpu"] / r["addresses"]
        c = r["counts"]
        what = ", ".join(f"{v} {k}" for k, v in sorted(c.items()) if k not in ("bytes received",))
        failures = f", {r['loaded']['failures']} failed" if r["loaded"]["failures"] else ""
        print(f"| {r['name']} | {r['sent'] / 1e6:.2f} | {r['peak']:.0f}{_mark(r['peak'] <= PEAK_GOAL_MIB)} | "
              f"{r['settled']:.0f}{_mark(r['settled'] <= SETTLED_GOAL_MIB)} | "
              f"{'%.1f s' % r['within'] if r['within'] is not None else 'no'} | "
              f"{r['cpu']:.3f}{'' if r['addresses'] == 1 else ' (%.3f each)' % per_address}"
              f"{_mark(per_address <= ADDRESS_CPU_GOAL)} | "
              + (f"{r['per_stream']:.5f}{_mark(r['per_stream'] < STREAM_CPU_GOAL)}" if r["per_stream"] is not None
                 else "-") + " | "
              + (f"{r['per_block_ms']:.2f}{_mark(r['per_block_ms'] < BLOCK_CPU_GOAL_MS)}"
                 if r["per_block_ms"] is not None else "-")
              + f" | {q:.1f} / {lo:.1f} = {ratio:.1f}x{_mark(ratio <= P99_GOAL)}{failures} | "
              f"{r['log_bytes'] / 1e6:.1f} ({r['lines']}) | {what} |", flush=True)


def machine():
    """What the figures were measured on: CPU model, AVX-512, cores, load."""
    model, flags = "?", ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "?":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = line
    avx = "avx512f" if " avx512f" in flags else "no avx512f"
    return f"{model}, {avx}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}"


def main():
    names = sys.argv[1:] or [a.__name__ for a in abuse.ALL] + ["all", "h2"]
    names = [n for name in names for n in (H2_SCENARIOS if name == "h2" else [name])]
    unknown = [n for n in names if n not in H2_SCENARIOS and n != "all" and not hasattr(abuse, n)]
    if unknown:
        sys.exit(f"unknown: {' '.join(unknown)}; abusers: {' '.join(a.__name__ for a in abuse.ALL)} all; "
                 f"HTTP/2 scenarios: {' '.join(H2_SCENARIOS)} h2")
    abusers = [n for n in names if n not in H2_SCENARIOS]
    if abusers:
        pb = load_pb()
        print(f"{'abuser':22} {'client':8} {'p99 alone':>7} {'p99 abused':>8} {'ratio':>7} {'peak MiB':>8} "
              f"{'turns>2.5ms':>9} {'>10ms':>8} "
              f"{'longest ms':>10} {'attacks':>8} {'daemon cpu':>10} {'abuser cpu':>10}")
        for name in abusers:
            probe(pb, name)
    scenarios = [n for n in names if n in H2_SCENARIOS]
    if scenarios:
        print(f"\nHTTP/2 attacks against {os.environ['ANONAUTHD']} on {machine()}", flush=True)
        rows = [probe_h2(name) for name in scenarios]
        print_h2_table(rows)


if __name__ == "__main__":
    main()
