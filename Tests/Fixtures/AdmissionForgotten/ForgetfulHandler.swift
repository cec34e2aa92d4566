// A handler written without admission. It must not compile: `make check-admission`
// (Scripts/check_admission_fixture.sh) type-checks it against the built modules in the
// compiler's verify mode, which fails unless each error annotated below is the
// compiler's answer on the line it names, and no other error is.
import AnonAuthService
import AnonAuthWire

struct ForgetfulHandler {
  let env: ServiceEnvironment

  /// Signs an ID token without the call's `Admitted`.
  func mint() async throws(RPCError) -> String {
    // expected-error@+1 {{missing argument for parameter #2 in call}}
    try await env.minter.sign(["sub": .string("u")])
  }

  /// Hashes on the password pool without admission.
  func hash() async throws {
    // expected-error@+1 {{missing argument for parameter #1 in call}}
    _ = try await env.passwordPool.submit { () throws(Never) in 1 }
  }

  /// Forges the proof instead of being admitted (the debug build's module, made for
  /// testing, shows its file-private initializer; a release one has none to show).
  func forge() -> Admitted {
    // expected-error@+2 {{'Admitted' initializer is inaccessible due to 'fileprivate' protection level}}
    // expected-error@+1 {{missing argument for parameter #1 in call}}
    Admitted()
  }
}
