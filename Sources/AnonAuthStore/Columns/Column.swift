/// The storage class a column is declared with in the schema (`PRAGMA table_info`'s type).
public enum ColumnType: String, Sendable, Hashable {
  case integer = "INTEGER"
  case real = "REAL"
  case text = "TEXT"
  case blob = "BLOB"
}

/// One column of a table as its record declares it: the name in the schema, the type
/// there, and which property of the record it stores. A record's columns are declared
/// once, in its `TableDefinition`; reads and binds go through the declaration, so no
/// repository counts columns.
public struct Column<Record: Sendable>: Sendable {
  public let name: String
  public let type: ColumnType
  /// Whether the schema lets it hold NULL (an optional property).
  public let isNullable: Bool
  let encode: @Sendable (Record) -> SQLValue
  let decode: @Sendable (inout Record, Row, Int) throws(StoreError) -> Void

  init(
    _ name: String, _ type: ColumnType, nullable: Bool = false,
    encode: @escaping @Sendable (Record) -> SQLValue,
    decode: @escaping @Sendable (inout Record, Row, Int) throws(StoreError) -> Void
  ) {
    self.name = name
    self.type = type
    self.isNullable = nullable
    self.encode = encode
    self.decode = decode
  }
}

/// One factory per kind of property: the Swift type picks how the value is stored.
extension Column {
  public static func text(_ name: String, _ path: any WritableKeyPath<Record, String> & Sendable) -> Self {
    let property = Property(path)
    return Self(name, .text, encode: { .text($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.string(index))
    }
  }

  public static func optionalText(_ name: String, _ path: any WritableKeyPath<Record, String?> & Sendable)
    -> Self
  {
    let property = Property(path)
    return Self(name, .text, nullable: true, encode: { .optional($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.optionalString(index))
    }
  }

  /// A list of strings kept as text, one per line (no element may hold a newline; an
  /// empty line is dropped on the way back).
  public static func lines(_ name: String, _ path: any WritableKeyPath<Record, [String]> & Sendable) -> Self {
    let property = Property(path)
    return Self(name, .text, encode: { .text($0[keyPath: path].joined(separator: "\n")) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.string(index).split(separator: "\n").map(String.init))
    }
  }

  public static func integer(_ name: String, _ path: any WritableKeyPath<Record, Int64> & Sendable) -> Self {
    let property = Property(path)
    return Self(name, .integer, encode: { .integer($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.int64(index))
    }
  }

  /// SQLite has no boolean: 0 or 1 in an INTEGER column.
  public static func bool(_ name: String, _ path: any WritableKeyPath<Record, Bool> & Sendable) -> Self {
    let property = Property(path)
    return Self(name, .integer, encode: { .bool($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.bool(index))
    }
  }

  public static func blob(_ name: String, _ path: any WritableKeyPath<Record, [UInt8]> & Sendable) -> Self {
    let property = Property(path)
    return Self(name, .blob, encode: { .blob($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.blob(index))
    }
  }

  public static func optionalBlob(_ name: String, _ path: any WritableKeyPath<Record, [UInt8]?> & Sendable)
    -> Self
  {
    let property = Property(path)
    return Self(name, .blob, nullable: true, encode: { .optional($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.optionalBlob(index))
    }
  }
}

/// Where a decoded value goes in the record. A stored property of a struct has a fixed
/// offset (`MemoryLayout.offset(of:)`), and a value written there directly costs a store
/// instead of the runtime's walk of the key path, once per cell of every row read; a key
/// path without an offset (a computed property) is applied as it is.
struct Property<Record, Value>: Sendable {
  let path: any WritableKeyPath<Record, Value> & Sendable
  let offset: Int?

  init(_ path: any WritableKeyPath<Record, Value> & Sendable) {
    self.path = path
    offset = MemoryLayout<Record>.offset(of: path)
  }

  @inline(__always)
  func set(_ record: inout Record, _ value: Value) {
    guard let offset else {
      record[keyPath: path] = value
      return
    }
    withUnsafeMutableBytes(of: &record) { bytes in
      // The offset is of a stored property of type Value inside Record: initialized
      // memory of that type, which the assignment releases and replaces.
      guard let base = bytes.baseAddress else { return }
      (base + offset).assumingMemoryBound(to: Value.self).pointee = value
    }
  }
}
