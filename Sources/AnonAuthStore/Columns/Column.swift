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
  /// For a stored property: how to read the cell and where in the record it goes, so
  /// that `TableDefinition.decode` writes it without a call through `decode`.
  let direct: DirectSlot?

  init(
    _ name: String, _ type: ColumnType, nullable: Bool = false, direct: DirectSlot?,
    encode: @escaping @Sendable (Record) -> SQLValue,
    decode: @escaping @Sendable (inout Record, Row, Int) throws(StoreError) -> Void
  ) {
    self.name = name
    self.type = type
    self.isNullable = nullable
    self.direct = direct
    self.encode = encode
    self.decode = decode
  }
}

/// A cell read by its accessor and stored at a property's offset in the record. The
/// factory that makes it picks the kind from the property's Swift type, so the two
/// always agree.
struct DirectSlot: Sendable {
  enum Kind: Sendable {
    case text, optionalText, lines, integer, bool, blob, optionalBlob
  }

  let kind: Kind
  let offset: Int

  init?<Record, Value>(_ kind: Kind, _ path: any WritableKeyPath<Record, Value> & Sendable) {
    guard let offset = MemoryLayout<Record>.offset(of: path) else { return nil }
    self.kind = kind
    self.offset = offset
  }
}

/// One factory per kind of property: the Swift type picks how the value is stored.
extension Column {
  public static func text(_ name: String, _ path: any WritableKeyPath<Record, String> & Sendable) -> Self {
    let property = Property(path)
    return Self(name, .text, direct: DirectSlot(.text, path), encode: { .text($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.string(index))
    }
  }

  public static func optionalText(_ name: String, _ path: any WritableKeyPath<Record, String?> & Sendable)
    -> Self
  {
    let property = Property(path)
    return Self(
      name, .text, nullable: true, direct: DirectSlot(.optionalText, path),
      encode: { .optional($0[keyPath: path]) }
    ) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.optionalString(index))
    }
  }

  /// A list of strings kept as text, one per line (no element may hold a newline; an
  /// empty line is dropped on the way back).
  public static func lines(_ name: String, _ path: any WritableKeyPath<Record, [String]> & Sendable) -> Self {
    let property = Property(path)
    return Self(
      name, .text, direct: DirectSlot(.lines, path),
      encode: { .text($0[keyPath: path].joined(separator: "\n")) }
    ) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.string(index).split(separator: "\n").map(String.init))
    }
  }

  public static func integer(_ name: String, _ path: any WritableKeyPath<Record, Int64> & Sendable) -> Self {
    let property = Property(path)
    return Self(name, .integer, direct: DirectSlot(.integer, path), encode: { .integer($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.int64(index))
    }
  }

  /// SQLite has no boolean: 0 or 1 in an INTEGER column.
  public static func bool(_ name: String, _ path: any WritableKeyPath<Record, Bool> & Sendable) -> Self {
    let property = Property(path)
    return Self(name, .integer, direct: DirectSlot(.bool, path), encode: { .bool($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.bool(index))
    }
  }

  public static func blob(_ name: String, _ path: any WritableKeyPath<Record, [UInt8]> & Sendable) -> Self {
    let property = Property(path)
    return Self(name, .blob, direct: DirectSlot(.blob, path), encode: { .blob($0[keyPath: path]) }) {
      (record, row, index) throws(StoreError) in
      property.set(&record, try row.blob(index))
    }
  }

  public static func optionalBlob(_ name: String, _ path: any WritableKeyPath<Record, [UInt8]?> & Sendable)
    -> Self
  {
    let property = Property(path)
    return Self(
      name, .blob, nullable: true, direct: DirectSlot(.optionalBlob, path),
      encode: { .optional($0[keyPath: path]) }
    ) {
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
