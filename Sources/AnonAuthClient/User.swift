import Foundation

/// A signed-in user, FirebaseAuth's `User`: one object per signed-in user of an `Auth`,
/// updated in place by links, unlinks, reloads, profile changes and token refreshes, so
/// that the object an app holds never goes stale. Equal when it is the same user of the
/// same `Auth`. Its calls act on the user while it is the one signed in.
public final class User: UserInfo, Sendable, Hashable {
  /// The `Auth` the user belongs to, held weakly as FirebaseAuth's users hold theirs: the
  /// `Auth` holds its current user, and a strong reference back would keep both forever.
  private let owner: WeakAuth
  /// The user's id; it never changes, not even when a credential is linked.
  public let uid: String
  private let record: Locked<Session>

  init(auth: Auth, session: Session) {
    self.owner = WeakAuth(auth)
    self.uid = session.uid
    self.record = Locked(session)
  }

  /// The user's `Auth`; `.nullUser` once the app let go of it.
  var auth: Auth {
    get throws(AuthError) {
      guard let auth = owner.value else {
        throw AuthError(.nullUser, message: "the user's Auth no longer exists")
      }
      return auth
    }
  }

  /// `Auth.deliver` through the user's `Auth`; without one, `completion` hears `.nullUser`
  /// on the main queue.
  func deliver<Value: Sendable>(
    _ completion: ((Value?, (any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Value
  ) {
    if let auth = owner.value { return auth.deliver(completion, work) }
    let box = Completion(call: completion)
    DispatchQueue.main.async { box.call?(nil, AuthError(.nullUser)) }
  }

  /// `deliver` for calls that return nothing.
  func deliver(_ completion: (((any Error)?) -> Void)?, _ work: @escaping @Sendable () async throws -> Void) {
    if let auth = owner.value { return auth.deliver(completion, work) }
    let box = VoidCompletion(call: completion)
    DispatchQueue.main.async { box.call?(AuthError(.nullUser)) }
  }

  /// The session as it is now.
  var session: Session { record.withLock { $0 } }

  func update(_ session: Session) { record.withLock { $0 = session } }

  /// "Firebase", as for FirebaseAuth's `User`.
  public var providerID: String { "Firebase" }
  /// True while no credential is linked.
  public var isAnonymous: Bool { session.isAnonymous }
  public var email: String? { session.email }
  public var displayName: String? { session.displayName }
  public var photoURL: URL? { session.photoURL }
  public var phoneNumber: String? { session.phoneNumber }
  public var isEmailVerified: Bool { session.emailVerified ?? false }
  /// The linked providers ("password", "google.com"...); empty for an anonymous user.
  public var providerData: [any UserInfo] { session.providerData }
  /// When the account was made and when it last signed in, as the server said.
  public var metadata: UserMetadata {
    let session = session
    return UserMetadata(creationDate: session.creationDate, lastSignInDate: session.lastSignInDate)
  }
  /// The refresh token of the session (rotated by every refresh).
  public var refreshToken: String? { session.refreshToken }
  /// Tenants are not supported: always nil.
  public var tenantID: String? { nil }

  public static func == (lhs: User, rhs: User) -> Bool {
    lhs === rhs || (lhs.owner.value != nil && lhs.owner.value === rhs.owner.value && lhs.uid == rhs.uid)
  }

  public func hash(into hasher: inout Hasher) { hasher.combine(uid) }
}

/// When an account was made and last signed in, as FirebaseAuth's `UserMetadata`.
public final class UserMetadata: Sendable {
  public let creationDate: Date?
  public let lastSignInDate: Date?

  init(creationDate: Date?, lastSignInDate: Date?) {
    self.creationDate = creationDate
    self.lastSignInDate = lastSignInDate
  }
}

/// A weak reference to an `Auth`.
///
/// `@unchecked Sendable`: `value` is set once, at init, and after that only zeroed by the
/// runtime when the `Auth` goes away, which it does atomically.
final class WeakAuth: @unchecked Sendable {
  weak var value: Auth?
  init(_ value: Auth) { self.value = value }
}
