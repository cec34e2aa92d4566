#!/usr/bin/env bash
# Clean-up of N eligible anonymous accounts while sign-ups continue: the sign-up p99
# with the clean-up running, beside the p99 without it, in one run.
#   1. a release daemon makes its store, then stops;
#   2. N anonymous accounts (each with a refresh token) due for deletion are written
#      straight into the store with python3's sqlite3;
#   3. the daemon starts again (background clean-up far in the future), a sign-up
#      benchmark runs alone, then again while `anonauth admin run-cleanup` deletes all N.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.build/release"
accounts=${BENCH_CLEANUP_ACCOUNTS:-200000}
seconds=${BENCH_SECONDS:-10}
dir=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

start() {
  : >"$dir/stdout"
  "$bin/anonauthd" --dev --data-dir "$dir" --listen 127.0.0.1:0 --ops-listen 127.0.0.1:0 --log-level warn \
    --cleanup-interval-ms 86400000 >"$dir/stdout" 2>>"$dir/stderr" &
  pid=$!
  for _ in $(seq 200); do grep -q '"event":"ready"' "$dir/stdout" 2>/dev/null && return; sleep 0.1; done
  echo "daemon did not start" >&2; exit 1
}

start
kill "$pid"; wait "$pid" || true; pid=""

python3 - "$dir/anonauth.db" "$accounts" <<'PY'
import hashlib, os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
n = int(sys.argv[2])
now = int(time.time() * 1000)
created = now - 40 * 86400000
rows, tokens = [], []
for i in range(n):
    uid = "bench%023d" % i
    rows.append(("demo-project", uid, 1, created, created, created + 30 * 86400000))
    tokens.append((hashlib.sha256(uid.encode()).digest(), "demo-project", uid, uid, created, created // 1000, "anonymous"))
db.executemany("INSERT INTO accounts (project_id, local_id, is_anonymous, created_at_ms, last_sign_in_at_ms, "
               "scheduled_deletion_at_ms) VALUES (?,?,?,?,?,?)", rows)
db.executemany("INSERT INTO refresh_tokens (token_hash, project_id, local_id, family_id, issued_at_ms, auth_time, "
               "sign_in_provider) VALUES (?,?,?,?,?,?,?)", tokens)
db.commit()
print(f"wrote {n} eligible anonymous accounts")
PY

start
echo "== sign-ups alone"
"$bin/anonauth" bench signup --data-dir "$dir" --connections 64 --concurrency 1 --seconds "$seconds" --json | tee "$dir/alone.json"
echo "== sign-ups while clean-up deletes $accounts accounts"
"$bin/anonauth" bench signup --data-dir "$dir" --connections 64 --concurrency 1 --seconds "$seconds" --json >"$dir/during.json" &
bench=$!
sleep 1
t0=$(date +%s.%N)
"$bin/anonauth" admin run-cleanup --data-dir "$dir" --timeout-ms 600000 --json
t1=$(date +%s.%N)
wait "$bench"
cat "$dir/during.json"
python3 - "$dir/alone.json" "$dir/during.json" "$t0" "$t1" "$accounts" <<'PY'
import json, sys
alone, during = (json.load(open(p)) for p in sys.argv[1:3])
took = float(sys.argv[4]) - float(sys.argv[3])
print(f"clean-up: {sys.argv[5]} accounts in {took:.1f} s ({int(int(sys.argv[5]) / took)}/s)")
print(f"sign-up p99: {alone['p99_ms']:.1f} ms alone, {during['p99_ms']:.1f} ms during clean-up; "
      f"sign-ups/s {alone['calls_per_second']} alone, {during['calls_per_second']} during")
PY
