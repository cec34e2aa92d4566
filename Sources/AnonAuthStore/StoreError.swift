import CSQLite

/// A failure of the store, with SQLite's codes and the SQL that failed, so that a log line
/// says what went wrong and callers can tell a UNIQUE violation from a broken disk.
///
/// The SQL text is included (it holds placeholders, never the bound arguments, so no
/// secret reaches a log through it).
public struct StoreError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure: a struct over a private enum, so kinds can be added without
  /// breaking callers' `switch`es.
  public struct Kind: Hashable, Sendable, CustomStringConvertible {
    private enum Value: Hashable, Sendable {
      case sqlite, constraint, busy, readOnly, corrupt, schemaTooNew, migrationFailed
      case conversion, closed, invalidArgument, io, full, unavailable
    }
    private let value: Value

    /// Any SQLite failure without a kind of its own.
    public static let sqlite = Kind(value: .sqlite)
    /// A UNIQUE, PRIMARY KEY, FOREIGN KEY, CHECK or NOT NULL constraint failed.
    public static let constraint = Kind(value: .constraint)
    /// The database stayed locked for longer than `busyTimeoutMs`.
    public static let busy = Kind(value: .busy)
    /// A write went through a read-only connection.
    public static let readOnly = Kind(value: .readOnly)
    /// The file is not a database or failed its integrity check.
    public static let corrupt = Kind(value: .corrupt)
    /// The file was written by a newer build: opening it could lose data.
    public static let schemaTooNew = Kind(value: .schemaTooNew)
    /// A migration failed and was rolled back; the store stays at the previous version.
    public static let migrationFailed = Kind(value: .migrationFailed)
    /// A column did not hold the type asked for.
    public static let conversion = Kind(value: .conversion)
    /// The store was closed.
    public static let closed = Kind(value: .closed)
    /// The file system refused an operation outside SQLite (a backup's rename).
    public static let io = Kind(value: .io)
    /// The disk (or the file system's quota) is full: writes fail until space returns;
    /// reads go on.
    public static let full = Kind(value: .full)
    /// The replicated store has no leader this node can reach (an election, a lost
    /// majority, a partition): nothing can be read or written until one is back. A write
    /// cut off by it may or may not have committed.
    public static let unavailable = Kind(value: .unavailable)
    /// The caller passed something the store cannot use (options, argument count, SQL).
    public static let invalidArgument = Kind(value: .invalidArgument)

    public var description: String { "\(value)" }
  }

  public let kind: Kind
  /// SQLite's primary result code (`SQLITE_CONSTRAINT`, ...), or 0 when SQLite did not fail.
  public let resultCode: Int32
  /// SQLite's extended result code (`SQLITE_CONSTRAINT_UNIQUE`, ...), or 0.
  public let extendedCode: Int32
  public let message: String
  /// The statement that failed, when there is one.
  public let sql: String?

  public init(
    kind: Kind, message: String, sql: String? = nil, resultCode: Int32 = 0, extendedCode: Int32 = 0
  ) {
    self.kind = kind
    self.message = message
    self.sql = sql
    self.resultCode = resultCode
    self.extendedCode = extendedCode
  }

  /// The error SQLite reported on `handle` for a call that returned `code`. The message is
  /// read at once, before another call on the connection can replace it.
  init(code: Int32, handle: OpaquePointer?, sql: String?) {
    let extended = handle.map { sqlite3_extended_errcode($0) } ?? code
    let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
    self.init(code: code, extendedCode: extended == 0 ? code : extended, message: message, sql: sql)
  }

  /// An error from a result code alone, for calls that have no connection to ask.
  init(code: Int32, extendedCode: Int32, message: String?, sql: String?) {
    let primary = code & 0xff
    let kind: Kind =
      switch primary {
      case SQLITE_CONSTRAINT: .constraint
      case SQLITE_BUSY, SQLITE_LOCKED: .busy
      case SQLITE_READONLY: .readOnly
      case SQLITE_CORRUPT, SQLITE_NOTADB: .corrupt
      case SQLITE_FULL: .full
      default: .sqlite
      }
    let text = message ?? sqlite3_errstr(code).map { String(cString: $0) } ?? "SQLite error \(code)"
    self.init(
      kind: kind, message: text, sql: sql, resultCode: primary, extendedCode: extendedCode)
  }

  /// True for any constraint failure (UNIQUE, FOREIGN KEY, CHECK, NOT NULL, ...).
  public var isConstraintViolation: Bool { resultCode == SQLITE_CONSTRAINT }

  /// True when a row would duplicate a UNIQUE or PRIMARY KEY value: the one constraint
  /// failure callers turn into "already exists" rather than into a bug report.
  public var isUniqueViolation: Bool {
    extendedCode == Self.constraintUnique || extendedCode == Self.constraintPrimaryKey
  }

  /// A job left a deferred foreign-key violation: reported as SQLite would at COMMIT, but
  /// for that job alone.
  static let deferredForeignKey = StoreError(
    kind: .constraint, message: "FOREIGN KEY constraint failed (deferred)",
    resultCode: SQLITE_CONSTRAINT, extendedCode: constraintForeignKey)

  // sqlite3.h builds these with shifts, which Swift does not import.
  private static let constraintForeignKey = SQLITE_CONSTRAINT | (3 << 8)
  private static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
  private static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

  /// The same error, re-labelled (a migration's failure keeps SQLite's codes).
  func with(kind: Kind, messagePrefix: String) -> StoreError {
    StoreError(
      kind: kind, message: messagePrefix + message, sql: sql, resultCode: resultCode,
      extendedCode: extendedCode)
  }

  public var description: String {
    var text = "store error (\(kind)): \(message)"
    if resultCode != 0 { text += " [SQLite \(resultCode)/\(extendedCode)]" }
    if let sql { text += " in: \(sql.count > 200 ? sql.prefix(200) + "..." : sql)" }
    return text
  }
}
