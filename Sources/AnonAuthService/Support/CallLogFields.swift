import Synchronization

/// What a handler learns about its call that belongs in the call's log line: the project,
/// the uid and whether the account is anonymous (docs/architecture.md, "Engineering rules").
///
/// The transport makes one per call, hands it to the handler inside `CallContext`, and
/// reads it once the reply is sent; the services fill it in as they learn (the project
/// after the API key check, the uid once a token or an account names it). This way the
/// log line has the account's fields without the transport knowing what an account is.
public final class CallLogFields: Sendable {
  private struct Fields {
    var projectID: String?
    var uid: String?
    var isAnonymous: Bool?
  }

  private let fields = Mutex(Fields())
  private let logged = Atomic<Bool>(false)

  public init() {}

  /// The project the call acts on (named by its API key or by an admin request).
  public func setProject(_ projectID: String) {
    fields.withLock { $0.projectID = projectID }
  }

  /// The account the call acts on. `isAnonymous` nil leaves what was known before.
  public func setAccount(uid: String, isAnonymous: Bool? = nil) {
    fields.withLock {
      $0.uid = uid
      if let isAnonymous { $0.isAnonymous = isAnonymous }
    }
  }

  /// The fields set so far, under their log names (`project_id`, `uid`, `is_anon`);
  /// fields never set are left out rather than logged empty.
  public var logFields: [String: LogValue] {
    let snapshot = fields.withLock { $0 }
    var out: [String: LogValue] = [:]
    if let projectID = snapshot.projectID { out["project_id"] = .string(projectID) }
    if let uid = snapshot.uid { out["uid"] = .string(uid) }
    if let isAnonymous = snapshot.isAnonymous { out["is_anon"] = .bool(isAnonymous) }
    return out
  }

  /// True for the first caller only: a call's line is written once, by its handler's task
  /// when it finishes or by the loop when its deadline passes first, whichever comes first.
  public func claimLogging() -> Bool {
    !logged.exchange(true, ordering: .acquiringAndReleasing)
  }
}
