import AnonAuthDqlite

extension StoreError {
  /// A dqlite failure as the store reports it: a SQL failure keeps SQLite's codes, so a
  /// duplicate key is `isUniqueViolation` on either engine; a lost leader, a node that
  /// does not answer or a broken stream is `.unavailable`.
  init(_ error: DqliteError, sql: String?) {
    switch error {
    case .failure(let code, let message) where !error.isLeadershipLost:
      let extended = Int32(truncatingIfNeeded: code)
      self.init(code: extended & 0xff, extendedCode: extended, message: message, sql: sql)
    case .invalidRequest(let message):
      self.init(kind: .invalidArgument, message: message, sql: sql)
    default:
      self.init(kind: .unavailable, message: "\(error)", sql: sql)
    }
  }
}
