/// A table as the record stored in it declares it: the table's name, its primary key and
/// its columns, each bound to a property of the record. It is the one place that lists
/// a record's columns: the SELECT list, the decoding of a row, the INSERT and UPDATE
/// statements and their arguments all come from it, and a test checks it against the
/// schema the migrations make (`RecordSchemaTests`). Adding a column is a migration and a
/// line here.
///
/// A row is decoded by column name: the names of a statement's result are resolved to
/// positions once per prepared statement (`RowColumns`), so a row costs no string lookup.
public final class TableDefinition<Record: Sendable>: Sendable {
  public let name: String
  /// The primary key's columns.
  public let key: [String]
  /// Columns of the table that the record does not hold (an identity's account): the
  /// repository binds them, ahead of the record's own.
  public let owner: [String]
  public let columns: [Column<Record>]
  /// What decoding starts from: every declared column then overwrites its property.
  let blank: Record
  /// The declared columns, comma-separated, for `SELECT \(selection) FROM …`.
  public let selection: String
  /// The columns' direct slots alone, in their order (nil: the column's `decode`): the
  /// loop over a row's cells touches nothing else, and calls nothing but the accessor.
  private let slots: [DirectSlot?]

  public init(
    _ name: String, key: [String], owner: [String] = [], blank: Record, columns: [Column<Record>]
  ) {
    self.name = name
    self.key = key
    self.owner = owner
    self.blank = blank
    self.columns = columns
    selection = columns.map(\.name).joined(separator: ", ")
    slots = columns.map(\.direct)
  }

  /// The record a row of `SELECT \(selection)` (in any order, with other columns too)
  /// holds.
  /// - Throws: `StoreError.Kind.conversion` when the row lacks a declared column or one
  ///   holds the wrong type.
  public func decode(_ row: Row) throws(StoreError) -> Record {
    guard let names = row.columns else {
      throw StoreError(kind: .conversion, message: "a row without column names cannot be read as \(name)")
    }
    let positions = try names.positions(for: self)
    guard positions.count == slots.count else {
      throw StoreError(kind: .conversion, message: "the columns of \(name) were resolved for another table")
    }
    var record = blank
    for index in slots.indices {
      let position = positions[index]
      guard let slot = slots[index] else {
        try columns[index].decode(&record, row, position)
        continue
      }
      switch slot.kind {
      case .text: Self.store(try row.string(position), at: slot.offset, in: &record)
      case .optionalText: Self.store(try row.optionalString(position), at: slot.offset, in: &record)
      case .lines:
        Self.store(
          try row.string(position).split(separator: "\n").map(String.init), at: slot.offset, in: &record)
      case .integer: Self.store(try row.int64(position), at: slot.offset, in: &record)
      case .bool: Self.store(try row.bool(position), at: slot.offset, in: &record)
      case .blob: Self.store(try row.blob(position), at: slot.offset, in: &record)
      case .optionalBlob: Self.store(try row.optionalBlob(position), at: slot.offset, in: &record)
      }
    }
    return record
  }

  /// Assigns `value` to the stored property at `offset`, which its slot's kind says is
  /// of type `Value` (the factories pair them): the old value is released, as an
  /// assignment through the key path would.
  @inline(__always)
  private static func store<Value>(_ value: Value, at offset: Int, in record: inout Record) {
    withUnsafeMutableBytes(of: &record) { bytes in
      guard let base = bytes.baseAddress else { return }
      (base + offset).assumingMemoryBound(to: Value.self).pointee = value
    }
  }

  /// Every declared column's value, in the declared order (the order of `selection`).
  public func values(_ record: Record) -> [SQLValue] {
    columns.map { $0.encode(record) }
  }

  /// `INSERT INTO` the owner's columns and every declared column but `omitting` (which
  /// take their defaults), each bound to a `?` unless `expressions` gives SQL for it
  /// (whose own `?` the caller binds in its place: `WriteStatement.arguments`).
  /// With `where condition`, the row goes in only when the condition holds
  /// (`INSERT … SELECT … WHERE`); its `?` are bound last.
  public func insert(
    omitting: Set<String> = [], expressions: [String: String] = [:], where condition: String? = nil
  ) -> WriteStatement<Record> {
    var names = owner
    var terms = owner.map { _ in "?" }
    var slots = owner.indices.map { WriteStatement<Record>.Slot.owner($0) }
    var expressionCount = 0
    for (index, column) in columns.enumerated() where !omitting.contains(column.name) {
      names.append(column.name)
      if let expression = expressions[column.name] {
        terms.append(expression)
        slots.append(.expression(expressionCount))
        expressionCount += 1
      } else {
        terms.append("?")
        slots.append(.column(index))
      }
    }
    let head = "INSERT INTO \(name) (\(names.joined(separator: ", ")))"
    let values = terms.joined(separator: ", ")
    let sql =
      if let condition { "\(head) SELECT \(values) WHERE \(condition)" } else { "\(head) VALUES (\(values))" }
    return WriteStatement(sql: sql, slots: slots, table: self)
  }

  /// `UPDATE` of every declared column but the key and `omitting`, of the row whose key
  /// the record holds. Never `INSERT OR REPLACE`: REPLACE deletes the old row first, and
  /// foreign keys would cascade the deletion.
  public func update(omitting: Set<String> = []) -> WriteStatement<Record> {
    var assignments: [String] = []
    var slots: [WriteStatement<Record>.Slot] = []
    for (index, column) in columns.enumerated()
    where !key.contains(column.name) && !omitting.contains(column.name) {
      assignments.append("\(column.name) = ?")
      slots.append(.column(index))
    }
    var conditions: [String] = []
    for keyName in key {
      guard let index = columns.firstIndex(where: { $0.name == keyName }) else { continue }
      conditions.append("\(keyName) = ?")
      slots.append(.column(index))
    }
    let sql =
      "UPDATE \(name) SET \(assignments.joined(separator: ", ")) WHERE \(conditions.joined(separator: " AND "))"
    return WriteStatement(sql: sql, slots: slots, table: self)
  }
}

/// An INSERT or UPDATE made from a table's declaration, with the plan of its arguments:
/// made once (a static `let` of the repository), bound per call without counting.
public struct WriteStatement<Record: Sendable>: Sendable {
  enum Slot: Sendable {
    case owner(Int)
    case column(Int)
    case expression(Int)
  }

  public let sql: String
  let slots: [Slot]
  let table: TableDefinition<Record>

  /// The arguments in the order of the statement's `?`: the owner's values, the record's
  /// columns, each expression's own arguments in its column's place, then `trailing`
  /// (the condition's).
  public func arguments(
    _ record: Record, owner: [SQLValue] = [], expressions: [[SQLValue]] = [], trailing: [SQLValue] = []
  ) -> [SQLValue] {
    var arguments: [SQLValue] = []
    arguments.reserveCapacity(slots.count + trailing.count)
    for slot in slots {
      switch slot {
      case .owner(let index):
        if owner.indices.contains(index) { arguments.append(owner[index]) }
      case .column(let index):
        arguments.append(table.columns[index].encode(record))
      case .expression(let index):
        if expressions.indices.contains(index) { arguments.append(contentsOf: expressions[index]) }
      }
    }
    // A missing owner or expression value leaves the count short: the engine refuses
    // the statement (`invalidArgument`) rather than binding the wrong column.
    return arguments + trailing
  }
}
