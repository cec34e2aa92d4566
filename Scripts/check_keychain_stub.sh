#!/bin/sh
# Compiles Sources/AnonAuthClient/KeychainSessionStore.swift (and the few files it needs)
# on Linux against Tests/SecurityStub, a stand-in `Security` module with Apple's names and
# signatures, then runs Tests/SecurityStub/KeychainStoreCheck.swift over it. It proves
# the Keychain code type-checks against those declarations and maps the keychain's
# answers as documented; only an Apple build proves it against Apple's real Security.
# Outside the package graph, so no other target ever sees a module named Security.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
swiftc=${SWIFTC:-swiftc}
client="$root/Sources/AnonAuthClient"
"$swiftc" -swift-version 6 -warnings-as-errors -parse-as-library -emit-library -emit-module \
  -module-name Security -o "$out/libSecurity.so" -emit-module-path "$out/Security.swiftmodule" \
  "$root/Tests/SecurityStub/Security.swift"
"$swiftc" -swift-version 6 -warnings-as-errors -parse-as-library -module-name KeychainStoreCheck \
  -I "$out" -L "$out" -lSecurity -Xlinker -rpath -Xlinker "$out" -o "$out/check" \
  "$client/KeychainSessionStore.swift" "$client/Session.swift" "$client/SessionStore.swift" \
  "$client/Locked.swift" "$root/Tests/SecurityStub/KeychainStoreCheck.swift"
"$out/check"
