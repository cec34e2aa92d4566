import AnonAuthService
import AnonAuthWire
import Foundation
import Testing

/// Admission is not something a test or a handler opts into (docs/architecture.md, "Admission:
/// the seam of expensive work"): environments run production's limits unless a test names
/// others, and every end user's write is admitted, deletions included.
@Suite struct AdmissionByDefaultTests {
  /// A test environment has production's limits by default; `.off` is said by name.
  @Test func testEnvironmentsRunProductionAdmission() async throws {
    try await ServiceHarness.with { h in
      #expect(h.stack.env.admission.limits == AdmissionLimits())
    }
    try await ServiceHarness.with(admission: .off) { h in
      #expect(h.stack.env.admission.limits == .off)
    }
  }

  /// Every named exemption from admission is listed in docs/architecture.md: a new one
  /// is not added in silence.
  @Test func everyInternalWorkReasonIsDocumented() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let page = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
    for reason in Admitted.InternalWork.allCases {
      #expect(page.contains("| `.\(reason)` |"), "\(reason) is not listed in docs/architecture.md")
    }
    #expect(Admitted.internalWork(.adminCall).source == nil)
    #expect(Admitted.internalWork(.cleanupWorker).internalReason == .cleanupWorker)
  }

  /// `DeleteAccount` writes through the admitted write path: one address deleting
  /// accounts in a loop is paced like any other writer (the write rate at 1 a second).
  @Test func oneIPsDeletionsAreAdmittedAsWrites() async throws {
    try await AdmissionHarness.with(limits: .only { $0.write.perIP = 1 }) { h in
      var tokens: [String] = []
      for i in 0..<11 { tokens.append(try await h.anonymous(ip: "203.0.113.\(i + 1)").idToken) }
      await AdmissionFlood.expectLimited(h.env.metrics, .write, limit: 11) { i async throws(RPCError) in
        _ = try await h.accounts.deleteAccount(
          DeleteAccountRequest(idToken: tokens[i]),
          context: h.context("DeleteAccount", project: "adm-a", ip: FairAdmissionTests.attacker))
      }
    }
  }
}
