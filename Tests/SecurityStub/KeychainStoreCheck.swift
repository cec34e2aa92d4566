// Runs the real KeychainSessionStore (compiled into this program with the stub Security
// module) through what the Keychain answers: an empty keychain is no session, a locked
// one throws `.locked`, items go to the data-protection keychain with the chosen
// accessibility and access group. Exits 1 on the first failure.
import Foundation
import Security

@main struct KeychainStoreCheck {
  static func check(_ condition: Bool, _ what: String) {
    if !condition {
      FileHandle.standardError.write(Data("keychain check failed: \(what)\n".utf8))
      exit(1)
    }
  }

  static func main() throws {
    let store = KeychainSessionStore(service: "check", account: "session-key")
    let session = Session(
      uid: "u1", idToken: "i", refreshToken: "r", expirationDate: Date(timeIntervalSince1970: 1_000),
      isAnonymous: true)
    check(try store.load() == nil, "an empty keychain is no session")
    try store.save(session)
    check(try store.load() == session, "a saved session loads")
    let item = StubKeychain.item(service: "check", account: "session-key")
    check(item?.dataProtection == true, "the item is in the data-protection keychain")
    check(
      item?.accessible == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String, "after first unlock")
    var changed = session
    changed.refreshToken = "r2"
    try store.save(changed)
    check(try store.load() == changed, "a second save updates the item")

    StubKeychain.locked = true
    do {
      _ = try store.load()
      check(false, "a locked keychain must throw")
    } catch let error as SessionStoreError {
      check(error == .locked, "a locked keychain throws .locked")
    }
    StubKeychain.locked = false

    let grouped = store.withAccessGroup("TEAM.shared")
    check(try grouped.load() == nil, "another access group is another item")
    try grouped.save(session)
    check(
      StubKeychain.item(service: "check", account: "session-key", group: "TEAM.shared") != nil, "group item")
    try store.save(nil)
    check(try store.load() == nil, "a saved nil deletes the item")
    try store.save(nil)
    print("KeychainSessionStore checked against the stub Security module.")
  }
}
