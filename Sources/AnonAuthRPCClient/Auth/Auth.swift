import AnonAuthWire
import Foundation
import Synchronization

/// The client's face of AnonAuth, shaped like FirebaseAuth's `Auth`: sign in
/// anonymously, read `currentUser`, get fresh ID tokens, sign out.
public final class Auth: Sendable {
  let client: RPCClient
  let apiKey: String
  private let store: any SessionStore
  private let session: Mutex<Session?>

  /// - Parameters:
  ///   - apiKey: the project's API key (a public identifier, like a Firebase Web API key).
  ///   - store: where the session survives between runs; memory only by default.
  public init(client: RPCClient, apiKey: String, store: any SessionStore = MemorySessionStore()) {
    self.client = client
    self.apiKey = apiKey
    self.store = store
    self.session = Mutex(store.load())
  }

  /// The signed-in user, or nil.
  public var currentUser: User? {
    session.withLock { $0 }.map { User(auth: self, uid: $0.uid, isAnonymous: $0.isAnonymous) }
  }

  var currentSession: Session? { session.withLock { $0 } }

  /// Signs in with a new anonymous account; when an anonymous user is already signed in,
  /// returns that user instead, as the Firebase iOS SDK does.
  public func signInAnonymously() async throws(AuthError) -> User {
    if let user = currentUser, user.isAnonymous { return user }
    var request = SignUpRequest()
    request.kind = .anonymous(AnonymousSignUp())
    let response: AuthResponse = try await accounts.signUp(request)
    return try adopt(response)
  }

  /// Forgets the session locally (refresh tokens stay valid on the server until revoked).
  public func signOut() throws(AuthError) {
    try replace(nil)
  }

  // MARK: Internals shared with User

  /// AccountService's calls, with the project's API key.
  var accounts: AccountServiceClient<APIKeyTransport> {
    AccountServiceClient(APIKeyTransport(client: client, apiKey: apiKey))
  }

  @discardableResult
  func adopt(_ response: AuthResponse) throws(AuthError) -> User {
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    let new = Session(
      uid: response.localId, idToken: response.idToken, refreshToken: response.refreshToken,
      expiresAtMs: now + response.expiresIn * 1000, isAnonymous: response.isAnonymous,
      signInProvider: response.signInProvider, email: response.account?.email ?? "")
    try replace(new)
    return User(auth: self, uid: new.uid, isAnonymous: new.isAnonymous)
  }

  func replace(_ new: Session?) throws(AuthError) {
    session.withLock { $0 = new }
    do {
      try store.save(new)
    } catch {
      throw .server(RPCError(code: .internalError, reason: "SESSION_STORE", message: "\(error)"))
    }
  }
}
