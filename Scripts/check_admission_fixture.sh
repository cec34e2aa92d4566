#!/bin/sh
# Admission cannot be forgotten: each handler in Tests/Fixtures/AdmissionForgotten/ skips
# admission and must not compile. It is type-checked against the modules `make build`
# made, in the compiler's verify mode (`-verify`): the run fails unless the compiler
# answers exactly the errors the fixture annotates. A second or so per fixture.
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
echo "Handlers without admission do not compile."
