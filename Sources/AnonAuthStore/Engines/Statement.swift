import CSQLite

/// SQLite's marker that makes it copy a bound buffer, which Swift may move or free as soon
/// as the bind call returns. The C macro is a cast Swift cannot import.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One prepared statement, owned by one `Database` and used only on that connection's
/// thread (it is deliberately not Sendable).
final class Statement {
  let handle: OpaquePointer
  let sql: String
  /// The connection, read for error messages.
  private let connection: OpaquePointer
  /// In the connection's cache (finalized when the cache drops it), or used once.
  var isCached: Bool
  /// Set while a statement runs, so that a nested use of the same SQL (a query inside a
  /// `forEach` body) prepares a second statement instead of resetting this one.
  var inUse = false

  init(handle: OpaquePointer, sql: String, connection: OpaquePointer, isCached: Bool) {
    self.handle = handle
    self.sql = sql
    self.connection = connection
    self.isCached = isCached
  }

  func bind(_ arguments: [SQLValue]) throws(StoreError) {
    let expected = Int(sqlite3_bind_parameter_count(handle))
    guard expected == arguments.count else {
      throw StoreError(
        kind: .invalidArgument, message: "expected \(expected) arguments, got \(arguments.count)",
        sql: sql)
    }
    for (offset, value) in arguments.enumerated() {
      let code = bind(value, at: Int32(offset + 1))
      if code != SQLITE_OK { throw StoreError(code: code, handle: connection, sql: sql) }
    }
  }

  private func bind(_ value: SQLValue, at index: Int32) -> Int32 {
    switch value {
    case .null:
      return sqlite3_bind_null(handle, index)
    case .integer(let number):
      return sqlite3_bind_int64(handle, index, number)
    case .real(let number):
      return sqlite3_bind_double(handle, index, number)
    case .text(let string):
      var string = string
      // An explicit length keeps text with NUL bytes whole; an empty buffer may have no
      // address, and a nil pointer would bind NULL instead of ''.
      return string.withUTF8 { bytes in
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
          return sqlite3_bind_text(handle, index, "", 0, transient)
        }
        return UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: bytes.count) {
          sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), transient, UInt8(SQLITE_UTF8))
        }
      }
    case .blob(let bytes):
      // A nil pointer would bind NULL: an empty blob is a zero-length zeroblob.
      if bytes.isEmpty { return sqlite3_bind_zeroblob(handle, index, 0) }
      return bytes.withUnsafeBytes {
        sqlite3_bind_blob64(handle, index, $0.baseAddress, UInt64($0.count), transient)
      }
    }
  }

  /// Advances one row: true when a row is ready, false when the statement is done.
  func step() throws(StoreError) -> Bool {
    switch sqlite3_step(handle) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    case let code: throw StoreError(code: code, handle: connection, sql: sql)
    }
  }

  /// The current row, copied out: SQLite's pointers die at the next step.
  func row() -> Row {
    let count = sqlite3_column_count(handle)
    var values: [SQLValue] = []
    values.reserveCapacity(Int(count))
    for column in 0..<count { values.append(value(at: column)) }
    return Row(values, columns: columns(count))
  }

  /// The result's column names, read from SQLite once for the life of the prepared
  /// statement (the cache keeps it for every later run), so that rows read by name
  /// resolve each name once.
  private var columnNames: RowColumns?

  private func columns(_ count: Int32) -> RowColumns {
    // A statement SQLite prepared again after a schema change may have other columns.
    if let columnNames, columnNames.count == Int(count) { return columnNames }
    let names = (0..<count).map { column in
      sqlite3_column_name(handle, column).map { String(cString: $0) } ?? ""
    }
    let made = RowColumns(names)
    columnNames = made
    return made
  }

  private func value(at column: Int32) -> SQLValue {
    switch sqlite3_column_type(handle, column) {
    case SQLITE_INTEGER:
      return .integer(sqlite3_column_int64(handle, column))
    case SQLITE_FLOAT:
      return .real(sqlite3_column_double(handle, column))
    case SQLITE3_TEXT:
      // `column_text` before `column_bytes`, as SQLite documents: the conversion it may do
      // changes the byte count.
      guard let text = sqlite3_column_text(handle, column) else { return .text("") }
      let length = Int(sqlite3_column_bytes(handle, column))
      return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
    case SQLITE_BLOB:
      let blob = sqlite3_column_blob(handle, column)
      let length = Int(sqlite3_column_bytes(handle, column))
      guard let blob, length > 0 else { return .blob([]) }
      return .blob(Array(UnsafeRawBufferPointer(start: blob, count: length)))
    default:
      return .null
    }
  }

  /// Makes the statement ready for its next use and drops references to the arguments.
  /// `reset` repeats the last step's error, already reported, so its result is ignored.
  func reset() {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
  }

  func finalize() {
    sqlite3_finalize(handle)
  }
}
