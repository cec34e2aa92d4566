import Foundation
import Testing

@testable import AnonAuthClient

/// The session outlives the `Auth` in its store; the file store keeps it 0600.
@Suite struct PersistenceTests {
  func temporaryPath() -> URL {
    FileManager.default.temporaryDirectory
      .appendingPathComponent("anonauth-client-\(UUID().uuidString)")
      .appendingPathComponent("session.json")
  }

  @Test func aSignedInUserIsBackAfterARestartAndGoneAfterSignOut() async throws {
    let path = temporaryPath()
    defer { try? FileManager.default.removeItem(at: path.deletingLastPathComponent()) }
    let stub = StubServer.anonymousU1()
    _ = try await stub.auth(store: FileSessionStore(url: path)).signInAnonymously()

    let restarted = stub.auth(store: FileSessionStore(url: path))
    #expect(restarted.currentUser?.uid == "u1")
    #expect(restarted.currentUser?.isAnonymous == true)
    #expect(try await restarted.currentUser?.getIDToken() == "id-1")

    try restarted.signOut()
    #expect(!FileManager.default.fileExists(atPath: path.path))
    #expect(stub.auth(store: FileSessionStore(url: path)).currentUser == nil)
  }

  @Test func theFileIsReadableByItsOwnerOnlyAndReplacedWhole() throws {
    let path = temporaryPath()
    defer { try? FileManager.default.removeItem(at: path.deletingLastPathComponent()) }
    let store = FileSessionStore(url: path)
    let session = Session(
      uid: "u1", idToken: "i", refreshToken: "r", expirationDate: Date(timeIntervalSince1970: 1_000_000),
      isAnonymous: false, email: "a@example.com",
      providerData: [ProviderUserInfo(providerID: "password", uid: "a@example.com")])
    try store.save(session)
    var changed = session
    changed.refreshToken = "r2"
    try store.save(changed)

    #expect(try store.load() == changed)
    let attributes = try FileManager.default.attributesOfItem(atPath: path.path)
    #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    let directory = try FileManager.default.attributesOfItem(atPath: path.deletingLastPathComponent().path)
    #expect((directory[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: path.deletingLastPathComponent().path)
    #expect(leftovers == ["session.json"])
  }

  @Test func anUnreadableFileIsNoSession() throws {
    let path = temporaryPath()
    defer { try? FileManager.default.removeItem(at: path.deletingLastPathComponent()) }
    try FileManager.default.createDirectory(
      at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data("not json".utf8).write(to: path)
    #expect(try FileSessionStore(url: path).load() == nil)
  }
}

extension PersistenceTests {
  @Test func aSaveCutShortBeforeTheMoveIsStillLoaded() throws {
    let path = temporaryPath()
    defer { try? FileManager.default.removeItem(at: path.deletingLastPathComponent()) }
    let store = FileSessionStore(url: path)
    let session = Session(
      uid: "u1", idToken: "i", refreshToken: "r", expirationDate: Date(timeIntervalSince1970: 1_000_000),
      isAnonymous: true)
    try store.save(session)
    try FileManager.default.moveItem(at: path, to: store.pending)
    #expect(try store.load() == session)
    try store.save(nil)
    #expect(try store.load() == nil)
  }
}
