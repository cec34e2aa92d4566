#!/usr/bin/env bash
# The golden-file test of the Swift generators: runs gen_swift_messages.py and
# gen_swift_services.py on Tests/Generator/fixture.proto and compares their output with
# Tests/Generator/golden/ (wire/: AnonAuthWire's files, service/: the handler protocols,
# server/: the router registrations). `make check-generator` runs it, in `make test`.
#
# After a deliberate change of what the generators write, refresh the goldens with
#   make generator-goldens        (Scripts/check-generator.sh --update)
# and read the diff of Tests/Generator/golden/ before committing it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
golden=$root/Tests/Generator/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root/Tests/Generator"
protoc --include_imports --include_source_info --descriptor_set_out="$tmp/descriptors.pb" -I. fixture.proto
mkdir -p "$tmp/out"
"${PYTHON:-python3}" "$root/Scripts/gen_swift_messages.py" "$tmp/descriptors.pb" "$tmp/out/wire"
"${PYTHON:-python3}" "$root/Scripts/gen_swift_services.py" "$tmp/descriptors.pb" "$tmp/out/wire" \
  "$tmp/out/service" "$tmp/out/server"
if [ "${1:-}" = --update ]; then
  rm -rf "$golden"
  cp -r "$tmp/out" "$golden"
  echo "Refreshed $golden: review its diff."
  exit 0
fi
if ! diff -r "$golden" "$tmp/out"; then
  echo "The generators' output differs from Tests/Generator/golden/ (above)." >&2
  echo "If the change is intended: make generator-goldens, review, commit." >&2
  exit 1
fi
echo "The generators match their goldens."
