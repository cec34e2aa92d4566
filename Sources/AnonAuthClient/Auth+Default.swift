import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension Auth {
  /// The app's `Auth`, set once by `configure`, so that code written for FirebaseAuth's
  /// `Auth.auth()` reads the same.
  private static let configured = Locked<Auth?>(nil)

  /// Makes the `Auth` that `Auth.auth()` returns; call it once at launch (where a
  /// Firebase app calls `FirebaseApp.configure()`). A second call replaces the first.
  @discardableResult
  public static func configure(
    baseURL: URL, apiKey: String, sessionStore: any SessionStore = MemorySessionStore()
  ) -> Auth {
    let auth = Auth(baseURL: baseURL, apiKey: apiKey, sessionStore: sessionStore)
    configured.withLock { $0 = auth }
    return auth
  }

  /// The `Auth` made by `configure`. Before `configure`, an `Auth` whose every call fails
  /// with `.internalError` saying so, and that has no user.
  public static func auth() -> Auth {
    configured.withLock { $0 } ?? unconfigured
  }

  private static let unconfigured = Auth(
    baseURL: URL(fileURLWithPath: "/"), apiKey: "", sessionStore: MemorySessionStore(), urlSession: .shared,
    unconfigured: true)
}
