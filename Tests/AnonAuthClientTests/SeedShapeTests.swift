import Foundation
import Testing

@testable import AnonAuthClient

/// Code written for FirebaseAuth reads the same: `Auth.auth()` after `configure`, and
/// errors read through `NSError` as Firebase's are.
@Suite struct SeedShapeTests {
  @Test func callersSwitchOnTheCode() async {
    let stub = StubServer()
    stub.on("accounts:signUp", status: 400, StubServer.error("EMAIL_EXISTS"))
    let auth = stub.auth()
    var caught = ""
    do {
      _ = try await auth.createUser(withEmail: "a@example.com", password: "pw123456")
    } catch {
      switch AuthErrorCode(rawValue: (error as NSError).code) {
      case .weakPassword: caught = "weak"
      case .emailAlreadyInUse: caught = "in use"
      default: caught = "other"
      }
    }
    #expect(caught == "in use")
  }

  @Test func authBeforeConfigureFailsEveryCallSayingSo() async {
    // Nothing in this test bundle calls `configure`.
    let auth = Auth.auth()
    #expect(auth.currentUser == nil)
    let error = await #expect(throws: AuthError.self) { try await auth.signInAnonymously() }
    #expect(error?.code == .internalError)
    #expect(error?.message.contains("Auth.configure") == true)
  }
}

extension SeedShapeTests {
  @Test func theOptionsFileGivesTheBaseURLAndTheKey() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "anonauth-options-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let options = directory.appendingPathComponent("AnonAuth.json")
    try Data(#"{"base_url":"https://auth.example.com:7443","api_key":"k1"}"#.utf8).write(to: options)
    let read = try ClientOptions(file: options)
    #expect(read.baseURL.absoluteString == "https://auth.example.com:7443" && read.apiKey == "k1")
    // The `client.json` that `anonauthd --dev` writes.
    try Data(#"{"rpc":"127.0.0.1:7443","api_key":"k2","ca_file":"x.pem"}"#.utf8).write(to: options)
    #expect(try ClientOptions(file: options).baseURL.absoluteString == "https://127.0.0.1:7443")
    try Data(#"{"rpc":"127.0.0.1:7443"}"#.utf8).write(to: options)
    let error = #expect(throws: AuthError.self) { try ClientOptions(file: options) }
    #expect(error?.message.contains("api_key") == true)
  }
}
