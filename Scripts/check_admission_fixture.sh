#!/bin/sh
# Admission cannot be forgotten: each handler in Tests/Fixtures/AdmissionForgotten/ skips
# admission and must not compile. It is type-checked against the modules `make build`
# made, in the compiler's verify mode (`-verify`): the run fails unless the compiler
# answers exactly the errors the fixture annotates. A second or so per fixture.
# Then a grep: in the service layer only the parts no end user's call reaches write the
# store directly; every other write goes through ServiceEnvironment.write(admitted, ...).
set -eu
SWIFTC=${SWIFTC:-swiftc}
BUILD=${BUILD:-.build/debug}
set -- -I "$BUILD/Modules" -Xcc -I -Xcc Sources/AnonAuthProto/include -Xcc -I -Xcc Sources/CShims/include
for map in Sources/*/module.modulemap Sources/AnonAuthProto/include/module.modulemap \
  "$BUILD/CShims.build/module.modulemap"; do
  set -- "$@" -Xcc "-fmodule-map-file=$map"
done
for fixture in Tests/Fixtures/AdmissionForgotten/*.swift; do
  if ! "$SWIFTC" -typecheck -Xfrontend -verify -Xfrontend -verify-ignore-unrelated "$@" "$fixture"; then
    echo "$fixture: the compiler did not refuse it as annotated (admission can be skipped?)"
    exit 1
  fi
done
allowed='Sources/AnonAuthService/(Support/ServiceEnvironment|Projects/ProjectDirectory|Tokens/TokenMinter|EmailActions/MailWorker)[.]swift'
around=$(grep -rlE '[.]store[.]write|[^.]store[.]write' Sources/AnonAuthService | grep -vE "$allowed" || true)
if [ -n "$around" ]; then
  echo "These write the store around the admitted write path (use env.write(admitted) { ... }):"
  echo "$around"
  exit 1
fi
echo "Handlers without admission do not compile; no end-user path writes around admission."
