/// One result row, copied out of SQLite so that it outlives the statement and can cross
/// threads (rows are what a `read` or `write` job hands back).
///
/// Accessors take a column index and throw rather than trap: a column holding the wrong
/// type is bad data, and bad data must not bring the server down. A row from the engine
/// also knows its columns' names (shared with every row of its statement): a record's
/// `TableDefinition` decodes it by name, and `index(of:)` finds one column.
public struct Row: Sendable, Hashable {
  public let values: [SQLValue]
  /// The names of the result's columns; nil for a row made by hand.
  public let columns: RowColumns?

  public init(_ values: [SQLValue], columns: RowColumns? = nil) {
    self.values = values
    self.columns = columns
  }

  /// Two rows are equal when their values are: the names are the statement's.
  public static func == (lhs: Row, rhs: Row) -> Bool { lhs.values == rhs.values }

  public func hash(into hasher: inout Hasher) { hasher.combine(values) }

  /// The position of the column named `name`: for results read once or twice (a record
  /// reads through its `TableDefinition`, which resolves names once per statement).
  /// - Throws: `StoreError.Kind.conversion` when the result has no such column.
  public func index(of name: String) throws(StoreError) -> Int {
    guard let index = columns?.index(of: name) else {
      throw StoreError(kind: .conversion, message: "no column \(name) in the result")
    }
    return index
  }

  public var count: Int { values.count }

  /// The raw value, or nil past the last column.
  public subscript(_ index: Int) -> SQLValue? {
    guard values.indices.contains(index) else { return nil }
    return values[index]
  }

  /// - Throws: `StoreError.Kind.conversion` when the index is out of range.
  public func value(_ index: Int) throws(StoreError) -> SQLValue {
    guard let value = self[index] else {
      throw StoreError(
        kind: .conversion, message: "column \(index) out of range (row has \(count) columns)")
    }
    return value
  }

  public func isNull(_ index: Int) throws(StoreError) -> Bool { try value(index) == .null }

  public func int64(_ index: Int) throws(StoreError) -> Int64 {
    guard let result = try optionalInt64(index) else { throw mismatch(index, "integer") }
    return result
  }

  public func int(_ index: Int) throws(StoreError) -> Int { Int(try int64(index)) }

  /// SQLite has no boolean: 0 is false, any other integer is true.
  public func bool(_ index: Int) throws(StoreError) -> Bool { try int64(index) != 0 }

  public func double(_ index: Int) throws(StoreError) -> Double {
    guard let result = try optionalDouble(index) else { throw mismatch(index, "real") }
    return result
  }

  public func string(_ index: Int) throws(StoreError) -> String {
    guard let result = try optionalString(index) else { throw mismatch(index, "text") }
    return result
  }

  public func blob(_ index: Int) throws(StoreError) -> [UInt8] {
    guard let result = try optionalBlob(index) else { throw mismatch(index, "blob") }
    return result
  }

  // MARK: Optional variants: NULL is nil, any other wrong type still throws.

  public func optionalInt64(_ index: Int) throws(StoreError) -> Int64? {
    switch try value(index) {
    case .null: return nil
    case .integer(let value): return value
    case let other: throw mismatch(index, "integer", found: other)
    }
  }

  public func optionalInt(_ index: Int) throws(StoreError) -> Int? {
    try optionalInt64(index).map { Int($0) }
  }

  public func optionalBool(_ index: Int) throws(StoreError) -> Bool? {
    try optionalInt64(index).map { $0 != 0 }
  }

  /// Integers widen to Double, as SQLite itself does for REAL columns.
  public func optionalDouble(_ index: Int) throws(StoreError) -> Double? {
    switch try value(index) {
    case .null: return nil
    case .real(let value): return value
    case .integer(let value): return Double(value)
    case let other: throw mismatch(index, "real", found: other)
    }
  }

  public func optionalString(_ index: Int) throws(StoreError) -> String? {
    switch try value(index) {
    case .null: return nil
    case .text(let value): return value
    case let other: throw mismatch(index, "text", found: other)
    }
  }

  /// Text reads as its UTF-8 bytes, since a value written as text is still bytes.
  public func optionalBlob(_ index: Int) throws(StoreError) -> [UInt8]? {
    switch try value(index) {
    case .null: return nil
    case .blob(let value): return value
    case .text(let value): return Array(value.utf8)
    case let other: throw mismatch(index, "blob", found: other)
    }
  }

  private func mismatch(_ index: Int, _ wanted: String, found: SQLValue? = nil) -> StoreError {
    let found = found ?? self[index] ?? .null
    return StoreError(kind: .conversion, message: "column \(index) is \(found.typeName), not \(wanted)")
  }
}
