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
  /// - Parameters:
  ///   - sessionStore: nil for the platform's persistent store (the Keychain on Apple
  ///     platforms), as FirebaseAuth persists its user; `MemorySessionStore()` to forget
  ///     the user at exit.
  ///   - urlSession: a session with the app's own trust delegate (pinning) or settings.
  @discardableResult
  public static func configure(
    baseURL: URL, apiKey: String, sessionStore: (any SessionStore)? = nil, urlSession: URLSession = .shared
  ) -> Auth {
    let auth = Auth(baseURL: baseURL, apiKey: apiKey, sessionStore: sessionStore, urlSession: urlSession)
    configured.withLock { $0 = auth }
    return auth
  }

  /// `configure` from a small JSON file shipped with the app (the role of
  /// `GoogleService-Info.plist`): `{"base_url": "https://auth.example.com:7443",
  /// "api_key": "..."}`. The `client.json` that `anonauthd --dev` writes works too: its
  /// `rpc` (`host:port`) becomes `https://host:port`.
  /// - Throws: `.internalError` naming what is missing when the file is not such JSON.
  @discardableResult
  public static func configure(
    optionsFile: URL, sessionStore: (any SessionStore)? = nil, urlSession: URLSession = .shared
  ) throws -> Auth {
    let options = try ClientOptions(file: optionsFile)
    return configure(
      baseURL: options.baseURL, apiKey: options.apiKey, sessionStore: sessionStore, urlSession: urlSession)
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

/// The options file `configure(optionsFile:)` reads.
struct ClientOptions {
  let baseURL: URL
  let apiKey: String

  init(file: URL) throws(AuthError) {
    guard let data = try? Data(contentsOf: file),
      let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    else { throw AuthError(.internalError, message: "\(file.path) is not a JSON object") }
    let base = (object["base_url"] as? String) ?? (object["rpc"] as? String).map { "https://\($0)" }
    guard let base, let url = URL(string: base), url.scheme != nil else {
      throw AuthError(.internalError, message: "\(file.path) has no base_url (or rpc)")
    }
    guard let apiKey = object["api_key"] as? String, !apiKey.isEmpty else {
      throw AuthError(.internalError, message: "\(file.path) has no api_key")
    }
    self.baseURL = url
    self.apiKey = apiKey
  }
}
