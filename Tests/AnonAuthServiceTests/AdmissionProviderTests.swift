import AnonAuthService
import AnonAuthWire
import Testing

/// Fair admission of the provider paths: SignInWithIdp (its password form included) and
/// the Firebase session exchange are admitted per end-user IP like every sign-in.
@Suite struct AdmissionProviderTests {
  static let attacker = FairAdmissionTests.attacker
  static let bystander = FairAdmissionTests.bystander

  @Test func oneIPsIdpSignInFloodIsLimited() async throws {
    try await LinkingHarness.with(admission: .only { $0.signing.perIP = 1 }) { h in
      let credential = try h.googleCredential(sub: "g-flood")
      _ = try await h.signIn(credential, ip: "203.0.113.1")
      await AdmissionFlood.expectLimited(h.env.metrics, .signing) { _ async throws(RPCError) in
        _ = try await h.signIn(credential, ip: Self.attacker)
      }
      _ = try await h.signIn(credential, ip: Self.bystander)
    }
  }

  /// SignInWithIdp with a `password` credential hashes like SignInWithPassword, and is
  /// admitted as it is.
  @Test func theIdpPasswordFormIsAdmittedToo() async throws {
    try await LinkingHarness.with(admission: .only { $0.password.perIP = 1 }) { h in
      _ = try await h.signUp(email: "idp-pw@example.com", password: "secret-1", ip: "203.0.113.1")
      let credential = LinkingHarness.password("idp-pw@example.com", "secret-1")
      await AdmissionFlood.expectLimited(h.env.metrics, .password) { _ async throws(RPCError) in
        _ = try await h.signIn(credential, ip: Self.attacker)
      }
      _ = try await h.signIn(credential, ip: Self.bystander)
    }
  }

  @Test func oneIPsFirebaseExchangeFloodIsLimited() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with(admission: .only { $0.signing.perIP = 1 }) { h in
      try await FirebaseExchangeTests.configure(h, firebase)
      try await FirebaseExchangeTests.imported(h, uid: "fb-flood", anonymous: true)
      let token = try firebase.token(uid: "fb-flood", now: h.nowSeconds)
      await AdmissionFlood.expectLimited(h.env.metrics, .signing) { _ async throws(RPCError) in
        _ = try await FirebaseExchangeTests.exchange(h, token, ip: Self.attacker)
      }
      _ = try await FirebaseExchangeTests.exchange(h, token, ip: Self.bystander)
    }
  }
}
