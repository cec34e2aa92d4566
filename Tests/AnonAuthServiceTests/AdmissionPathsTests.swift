import AnonAuthService
import AnonAuthWire
import Foundation
import Testing

/// Fair admission on the paths that sign-up and sign-in did not cover at first: refresh
/// (whose session must survive a refusal), linking, and signing itself (a cancelled call
/// signs nothing).
@Suite struct AdmissionPathsTests {
  static let attacker = FairAdmissionTests.attacker
  static let bystander = FairAdmissionTests.bystander

  /// One IP refreshing in a loop is limited by its signing rate; another IP's refresh is
  /// answered; and the token whose refresh was refused was not rotated: long after the
  /// grace window it still refreshes (a refusal after the rotation would have lost the
  /// client its session, and the retry would have been taken for reuse).
  @Test func oneIPsRefreshFloodIsLimitedAndKeepsItsSession() async throws {
    try await AdmissionHarness.with(limits: .only { $0.signing.perIP = 1 }) { h in
      var token = try await h.anonymous(ip: "203.0.113.1").refreshToken
      let other = try await h.anonymous(ip: "203.0.113.2").refreshToken
      await AdmissionFlood.expectLimited(h.env.metrics, .signing) { _ async throws(RPCError) in
        token = try await h.refresh(token, ip: Self.attacker).refreshToken
      }
      _ = try await h.refresh(other, ip: Self.bystander)
      h.clock.advance(seconds: 60)
      let resumed = try await h.refresh(token, ip: Self.attacker)
      #expect(!resumed.idToken.isEmpty)
    }
  }

  /// A refresh refused its write is refused before it: the token stays the session's.
  @Test func aRefreshRefusedItsWriteRotatesNothing() async throws {
    try await AdmissionHarness.with(limits: .only { $0.write.perIP = 1 }) { h in
      var token = try await h.anonymous(ip: "203.0.113.1").refreshToken
      for _ in 0..<10 { token = try await h.refresh(token, ip: Self.attacker).refreshToken }
      let refused = await expectLinkError(.tooManyAttempts) { try await h.refresh(token, ip: Self.attacker) }
      #expect(refused?.details["retry_after_seconds"] == "1")
      #expect(h.env.metrics.admissionRefusals(.write, .ipRate) == 1)
      h.clock.advance(seconds: 60)
      _ = try await h.refresh(token, ip: Self.attacker)
    }
  }

  /// A grace-window re-issue signs a token, so it is admitted as signing like any other.
  @Test func graceReissuesAreAdmittedAsSigning() async throws {
    try await AdmissionHarness.with(limits: .only { $0.signing.perIP = 1 }) { h in
      for _ in 0..<5 { _ = try await h.anonymous(ip: Self.attacker) }
      let first = try await h.anonymous(ip: "203.0.113.1").refreshToken
      _ = try await h.refresh(first, ip: Self.attacker)  // the attacker's sixth signature
      for _ in 0..<4 { _ = try await h.refresh(first, ip: Self.attacker) }  // re-issues: ten
      await expectLinkError(.tooManyAttempts) { try await h.refresh(first, ip: Self.attacker) }
      #expect(h.env.metrics.admissionRefusals(.signing, .ipRate) == 1)
      _ = try await h.refresh(first, ip: Self.bystander)  // the fifth re-issue, for another address
    }
  }

  /// One IP linking passwords to many accounts is limited by its password rate; the
  /// refused account is unchanged and links from another address.
  @Test func oneIPsLinkFloodIsLimited() async throws {
    try await AdmissionHarness.with(limits: .only { $0.password.perIP = 1 }) { h in
      var idTokens: [String] = []
      for i in 0..<12 { idTokens.append(try await h.anonymous(ip: "203.0.113.\(i + 1)").idToken) }
      await AdmissionFlood.expectLimited(h.env.metrics, .password, limit: idTokens.count) {
        i async throws(RPCError) in
        _ = try await h.linkPassword(idTokens[i], email: "l\(i)@example.com", ip: Self.attacker)
      }
      let linked = try await h.linkPassword(idTokens[10], email: "l10@example.com", ip: Self.bystander)
      #expect(!linked.isAnonymous)
    }
  }

  /// A signature whose call was cancelled while it waited for a pool thread is dropped:
  /// the call is answered DEADLINE_EXCEEDED and no signature is made.
  @Test func aCancelledSignatureIsDropped() async throws {
    try await AdmissionHarness.with(limits: .off) { h in
      let pool = h.env.minter.cpuPool
      let gates = (0..<pool.threads).map { _ in Gate() }
      let blockers = gates.map { gate in
        Task { try await pool.submit(.internalWork(.standalone)) { () throws(Never) in gate.wait() } }
      }
      defer { for gate in gates { gate.open() } }
      try await waitUntil { gates.allSatisfy(\.waiting) }
      let ran = pool.jobsRun
      let signing = Task {
        try await h.env.minter.sign(["sub": .string("cancelled")], .internalWork(.standalone))
      }
      try await waitUntil { pool.jobsQueued == 1 }
      signing.cancel()
      for gate in gates { gate.open() }
      for blocker in blockers { try await blocker.value }
      await expectLinkError(.deadlineExceeded) { try await signing.value }
      #expect(pool.jobsDropped == 1)
      #expect(pool.jobsRun == ran)
    }
  }

  /// Email/password sign-up refuses a display name that ImportAccounts would refuse, so
  /// that every account exported imports again.
  @Test func signUpRefusesControlCharactersInTheDisplayName() async throws {
    try await AdmissionHarness.with(limits: .off) { h in
      for name in ["tab\there", "bell\u{7}", "c1\u{85}"] {
        let request = SignUpRequest(
          kind: .emailPassword(
            EmailPasswordSignUp(email: "dn@example.com", password: "secret-1", displayName: name)))
        let refused = await expectLinkError(.invalidArgument) {
          try await h.accounts.signUp(
            request, context: h.context("SignUp", project: "adm-a", ip: Self.attacker))
        }
        #expect(refused?.message.contains("display_name") == true)
      }
      #expect(try await h.accountCount("adm-a") == 0)
      let request = SignUpRequest(
        kind: .emailPassword(
          EmailPasswordSignUp(email: "dn@example.com", password: "secret-1", displayName: "Zoë Ünïcode")))
      _ = try await h.accounts.signUp(
        request, context: h.context("SignUp", project: "adm-a", ip: Self.attacker))
    }
  }
}

extension AdmissionHarness {
  func refresh(_ token: String, project: String = "adm-a", ip: String) async throws(RPCError) -> AuthResponse
  {
    try await accounts.refreshToken(
      RefreshTokenRequest(refreshToken: token), context: context("RefreshToken", project: project, ip: ip))
  }

  func linkPassword(_ idToken: String, email: String, project: String = "adm-a", ip: String)
    async throws(RPCError) -> AuthResponse
  {
    try await accounts.linkWithCredential(
      LinkWithCredentialRequest(
        idToken: idToken,
        credential: Credential(providerId: "password", email: email, password: "secret-1")),
      context: context("LinkWithCredential", project: project, ip: ip))
  }
}
