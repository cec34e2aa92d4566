import Foundation

extension Auth {
  /// The store an `Auth` keeps its session in when the app names none, so that a user
  /// stays signed in across launches as with FirebaseAuth: the Keychain on Apple
  /// platforms, elsewhere a 0600 file in the user's application-support directory
  /// (`~/.local/share` on Linux when it has no other), one per API key.
  public static func defaultSessionStore(apiKey: String) -> any SessionStore {
    let name = "session-" + String(apiKey.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
    #if canImport(Security)
      return KeychainSessionStore(account: name)
    #else
      let base =
        FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
      return FileSessionStore(
        url: base.appendingPathComponent("AnonAuth").appendingPathComponent(name + ".json"))
    #endif
  }
}
