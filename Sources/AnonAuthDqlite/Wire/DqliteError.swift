/// What can go wrong talking to a dqlite node.
public enum DqliteError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The node answered with a failure: a SQLite (extended) result code and its message.
  case failure(code: UInt64, message: String)
  /// The node's bytes do not follow the protocol: the connection cannot be trusted after it.
  case malformed(String)
  /// The node answered with a message type the request does not allow.
  case unexpectedResponse(type: UInt8, expected: String)
  /// Connecting, sending or receiving failed (the node is down, or the socket timed out).
  case io(String)
  /// No node of the ones tried knows a leader, or the leader cannot be reached.
  case noLeader(String)
  /// A request could not be encoded (text with a NUL byte, too many parameters).
  case invalidRequest(String)

  public var description: String {
    switch self {
    case .failure(let code, let message): "dqlite failure \(code): \(message)"
    case .malformed(let what): "malformed dqlite response: \(what)"
    case .unexpectedResponse(let type, let expected): "dqlite answered type \(type), expected \(expected)"
    case .io(let what): "dqlite connection: \(what)"
    case .noLeader(let what): "no dqlite leader: \(what)"
    case .invalidRequest(let what): "invalid dqlite request: \(what)"
    }
  }

  /// SQLite's extended codes for "this node is not (or no longer) the leader", old and new
  /// numbering: the caller must find the leader again and retry what was not committed.
  static let leadershipCodes: Set<UInt64> = [10250, 10506, 8202, 8458]

  /// True when the failure means the request reached a node that is not the leader, or a
  /// leader that lost its leadership while handling it.
  ///
  /// A node that stopped leading also drops the databases its client connections opened:
  /// their next request gets SQLITE_NOTFOUND "no database opened", the same signal.
  public var isLeadershipLost: Bool {
    guard case .failure(let code, let message) = self else { return false }
    return Self.leadershipCodes.contains(code) || (code == 12 && message.contains("no database opened"))
  }

  /// True when the connection must be dropped: nothing more can be read from it reliably.
  public var breaksConnection: Bool {
    switch self {
    case .malformed, .unexpectedResponse, .io, .noLeader: true
    case .failure, .invalidRequest: false
    }
  }
}
