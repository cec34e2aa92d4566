import Foundation
import Synchronization
import Testing

@testable import AnonAuthClient

/// A store that can be locked, as the Keychain is before the first unlock after a
/// restart: reads and writes fail with `.locked` until it is unlocked.
final class LockableStore: SessionStore {
  private let state: Mutex<(locked: Bool, session: Session?)>

  init(locked: Bool, session: Session? = nil) { state = Mutex((locked, session)) }

  func unlock() { state.withLock { $0.locked = false } }
  var saved: Session? { state.withLock { $0.session } }

  func load() throws -> Session? {
    try state.withLock { state throws(SessionStoreError) in
      if state.locked { throw SessionStoreError.locked }
      return state.session
    }
  }

  func save(_ session: Session?) throws {
    try state.withLock { state throws(SessionStoreError) in
      if state.locked { throw SessionStoreError.locked }
      state.session = session
    }
  }
}

/// A locked store is never taken for "signed out": no new anonymous account is made for
/// a user who has one, the session is read after unlock, and an account made while the
/// store is locked is kept in memory and saved once it opens.
@Suite struct LockedStoreTests {
  static let saved = Session(
    uid: "u-saved", idToken: "id-s", refreshToken: "refresh-s",
    expirationDate: Date(timeIntervalSinceNow: 3600),
    isAnonymous: true)

  @Test func aLockedStoreMakesNoNewAccountAndIsReadAfterUnlock() async throws {
    let stub = StubServer()
    let store = LockableStore(locked: true, session: Self.saved)
    let auth = stub.auth(store: store)
    let heard = Mutex<[String]>([])
    auth.addStateDidChangeListener { _, user in heard.withLock { $0.append(user?.uid ?? "nil") } }
    #expect(auth.currentUser == nil)

    var caught: (any Error)?
    do { try await auth.signInAnonymously() } catch { caught = error }
    // `as NSError`, not `as? NSError`: on Linux only the coercion bridges.
    #expect((try #require(caught) as NSError).code == AuthErrorCode.keychainError.rawValue)
    #expect(stub.methods.isEmpty)
    // A defensive sign-out at launch does not erase the user it has not seen.
    try auth.signOut()

    store.unlock()
    #expect(auth.currentUser?.uid == "u-saved")
    let again = try await auth.signInAnonymously()
    #expect(again.user.uid == "u-saved")
    #expect(stub.methods.isEmpty)
    auth.drain()
    #expect(heard.withLock { $0 } == ["nil", "u-saved"])
  }

  @Test func anAccountMadeWhileLockedIsKeptAndSavedAfterUnlock() async throws {
    let stub = StubServer()
    stub.on("accounts:signIn", StubServer.signIn(uid: "u1"))
    stub.on("accounts:signInWithPassword", StubServer.signIn(uid: "u1"))
    stub.on("accounts:lookup", StubServer.lookup(uid: "u1", email: "a@example.com", providers: ["password"]))
    let store = LockableStore(locked: true)
    let auth = stub.auth(store: store)
    try await auth.signIn(withEmail: "a@example.com", password: "pw")
    #expect(auth.currentUser?.uid == "u1")
    #expect(store.saved == nil)

    store.unlock()
    #expect(auth.currentUser?.uid == "u1")
    #expect(store.saved?.uid == "u1")
  }
}

/// A store with access groups, in memory: one session per group.
final class GroupedStore: AccessGroupSessionStore {
  let group: String?
  private let sessions: Mutex<[String: Session]>

  init(group: String? = nil, sessions: [String: Session] = [:]) {
    self.group = group
    self.sessions = Mutex(sessions)
  }

  private init(group: String?, sharing other: GroupedStore) {
    self.group = group
    self.sessions = Mutex(other.sessions.withLock { $0 })
  }

  func withAccessGroup(_ accessGroup: String?) -> any SessionStore {
    GroupedStore(group: accessGroup, sharing: self)
  }
  func load() -> Session? { sessions.withLock { $0[group ?? ""] } }
  func save(_ session: Session?) { sessions.withLock { $0[group ?? ""] = session } }
}

extension LockedStoreTests {
  @Test func useUserAccessGroupSwitchesToTheUserSavedThere() async throws {
    let stub = StubServer()
    var shared = Self.saved
    shared.uid = "u-shared"
    let auth = stub.auth(store: GroupedStore(sessions: ["": Self.saved, "TEAM.shared": shared]))
    let heard = Mutex<[String]>([])
    auth.addStateDidChangeListener { _, user in heard.withLock { $0.append(user?.uid ?? "nil") } }
    #expect(auth.currentUser?.uid == "u-saved")

    try auth.useUserAccessGroup("TEAM.shared")
    #expect(auth.userAccessGroup == "TEAM.shared")
    #expect(auth.currentUser?.uid == "u-shared")
    try auth.useUserAccessGroup("TEAM.empty")
    #expect(auth.currentUser == nil)
    auth.drain()
    #expect(heard.withLock { $0 } == ["u-saved", "u-shared", "nil"])
  }
}
