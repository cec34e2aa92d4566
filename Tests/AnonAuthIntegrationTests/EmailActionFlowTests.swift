import AnonAuthRPCClient
import AnonAuthWire
import Foundation
import Testing

/// The email actions through the native client against a real `--dev` daemon, which
/// writes its mails into the data dir: an anonymous user upgraded by a sign-in link keeps
/// its uid, and a password reset from the mailed code ends the old session.
@Suite struct EmailActionFlowTests {
  /// The code of the newest mail of `mode` to `address` in the daemon's mail folder.
  static func mailedCode(_ daemon: DaemonProcess, to address: String, mode: String) async throws -> String {
    let folder = daemon.dataDir.appendingPathComponent("mail").path
    for _ in 0..<600 {
      let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
      var found: String?
      for name in names {
        guard let text = try? String(contentsOfFile: folder + "/" + name, encoding: .utf8),
          text.contains("To: \(address)\n"), let range = text.range(of: "mode=\(mode)&oobCode=")
        else { continue }
        found = String(
          text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
      }
      if let found { return found }
      try await Task.sleep(for: .milliseconds(50))
    }
    throw CancellationError()
  }

  @Test func anEmailLinkUpgradeAndAPasswordReset() async throws {
    let daemon = try await DaemonProcess.start()
    let auth = Auth(client: try daemon.client(), apiKey: daemon.apiKey)
    let guest = try await auth.signInAnonymously()
    try await auth.sendSignInLink(toEmail: "native@example.com", continueURL: "http://localhost/done")
    let linkCode = try await Self.mailedCode(daemon, to: "native@example.com", mode: "signIn")
    let linked = try await guest.link(withEmail: "native@example.com", linkCode: linkCode)
    #expect(linked.user.uid == guest.uid && !linked.user.isAnonymous)
    let info = try await linked.user.accountInfo()
    #expect(info.email == "native@example.com" && info.emailVerified)

    try await auth.sendPasswordReset(withEmail: "native@example.com")
    let resetCode = try await Self.mailedCode(daemon, to: "native@example.com", mode: "resetPassword")
    #expect(try await auth.verifyPasswordResetCode(resetCode) == "native@example.com")
    try await auth.confirmPasswordReset(withCode: resetCode, newPassword: "native-password")
    await #expect(throws: AuthError.invalidActionCode) {
      try await auth.confirmPasswordReset(withCode: resetCode, newPassword: "again-password")
    }
    let again = try await auth.signIn(withEmail: "native@example.com", password: "native-password")
    #expect(again.user.uid == guest.uid)
  }
}
