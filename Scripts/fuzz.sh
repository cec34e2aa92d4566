#!/usr/bin/env bash
# make fuzz FUZZ_SECONDS=N [FUZZ_TARGETS="frame jwt ..."] [FUZZ_JOBS=J]: builds
# anonauth-fuzz with libFuzzer and AddressSanitizer (in .build-fuzz/) and runs each target
# for N seconds, J targets at a time (default 1), starting from the committed seed corpus
# (Tests/Fuzz/corpus/TARGET) plus what earlier runs on this machine found
# (.build-fuzz/corpus/TARGET). A crashing or timing-out input is written to
# Tests/Fuzz/crashes/TARGET/: commit it with the fix, and `make test` replays it from
# then on. Prints one line a target and exits 1 on a finding.
# Leak detection is off: the Swift runtime and Foundation keep caches LeakSanitizer
# reports (an empty config file "leaked" inside Foundation's file reader).
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
targets=${FUZZ_TARGETS:-"frame requests prescan jwt jwks json ops-http outbound-http http-request http2 grpc-standard firebase-json phc config hash-config dqlite smtp-reply"}
scratch=.build-fuzz

swift build --product anonauth-fuzz --scratch-path "$scratch" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld 2>&1 |
  grep -v "Cannot export local symbol" | grep -E "error|warning:" && exit 1
binary="$scratch/debug/anonauth-fuzz"
[ -x "$binary" ] || { echo "fuzz build failed"; exit 1; }

# Runs one target and writes its summary line to $scratch/fuzz-TARGET.line.
run_target() {
  local target=$1 work="$scratch/corpus/$1" crashes="Tests/Fuzz/crashes/$1" log="$scratch/fuzz-$1.log"
  mkdir -p "$work" "$crashes"
  local before after runs rate units new
  before=$(find "$crashes" -type f | wc -l)
  ANONAUTH_FUZZ_TARGET="$target" ASAN_OPTIONS=detect_leaks=0 "$binary" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$work" "Tests/Fuzz/corpus/$target" >"$log" 2>&1
  after=$(find "$crashes" -type f | wc -l)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  units=$(find "$work" -type f | wc -l)
  new=$((after - before))
  printf '%-14s %8s %12s %10s %8s  %s\n' "$target" "$seconds" "${runs:-?}" "${rate:-?}" "$units" \
    "$([ "$new" -gt 0 ] && echo "$new new in $crashes (log: $log)" || echo none)" >"$scratch/fuzz-$target.line"
}

running=0
for target in $targets; do
  run_target "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

printf '%-14s %8s %12s %10s %8s  %s\n' target seconds executions exec/s corpus findings
findings=0
for target in $targets; do
  cat "$scratch/fuzz-$target.line"
  grep -q " none$" "$scratch/fuzz-$target.line" || findings=1
done
[ "$findings" = 0 ]
