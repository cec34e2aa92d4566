#!/usr/bin/env bash
# The benchmark run behind the README's figures: a release daemon in a temporary data
# dir (durable settings: synchronous=FULL), then, in one run so the ratios compare like
# with like on a shared machine:
#   - openssl speed rsa2048 (one core's RS256 sign rate, the sign-up ceiling per core)
#   - anonauth bench signup  (anonymous SignUp on 64 connections)
#   - anonauth bench health  (health calls on 64 connections)
#   - anonauth bench idle    (daemon RSS per idle TLS connection)
#   - anonauth bench password  (SignInWithPassword: bound by scrypt's cost)
#   - anonauth bench link-oidc (LinkWithCredential with an ES256 OIDC ID token)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.build/release"
seconds=${BENCH_SECONDS:-10}
idle=${BENCH_IDLE_CONNECTIONS:-10000}
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT

"$bin/anonauthd" --dev --data-dir "$dir" --listen 127.0.0.1:0 --ops-listen 127.0.0.1:0 --log-level warn \
  >"$dir/stdout" 2>"$dir/stderr" &
pid=$!
for _ in $(seq 100); do grep -q '"event":"ready"' "$dir/stdout" 2>/dev/null && break; sleep 0.1; done

echo "== openssl speed -seconds 3 rsa2048 (one core)"
rsa=$(openssl speed -seconds 3 rsa2048 2>/dev/null | awk '/^rsa 2048/ {print $(NF-1)}')
echo "RS256 signs/s on one core: $rsa"

echo "== anonauth bench signup"
signup=$("$bin/anonauth" bench signup --data-dir "$dir" --connections 64 --concurrency 4 --seconds "$seconds" --json)
echo "$signup"
echo "== anonauth bench health"
"$bin/anonauth" bench health --data-dir "$dir" --connections 64 --concurrency 8 --seconds "$seconds"
echo "== anonauth bench password"
"$bin/anonauth" bench password --data-dir "$dir" --connections 8 --concurrency 2 --seconds "$seconds"
echo "== anonauth bench link-oidc"
"$bin/anonauth" bench link-oidc --data-dir "$dir" --connections 16 --concurrency 4 --seconds "$seconds" \
  --accounts "${BENCH_LINK_ACCOUNTS:-6000}"
echo "== anonauth bench idle"
"$bin/anonauth" bench idle --data-dir "$dir" --connections "$idle" --hold-seconds 3

rate=$(echo "$signup" | sed 's/.*"calls_per_second":\([0-9]*\).*/\1/')
python3 -c "print(f'sign-ups/s : one-core RS256 signs/s = {$rate} : {$rsa} = {$rate / $rsa:.2f}')"
