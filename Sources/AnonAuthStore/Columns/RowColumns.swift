import Synchronization

/// The column names of a statement's result, shared by every row the statement returns:
/// a row read by name finds its values here without a string lookup per cell.
///
/// Made once per prepared statement (the single file) or per SQL string (the replicated
/// store), so names are resolved to positions once per statement and table, not per row:
/// `positions(for:)` keeps what it resolved.
public final class RowColumns: Sendable {
  /// The names in the order of the result's values.
  public let names: [String]
  private let indexByName: [String: Int]
  /// What `positions(for:)` resolved, by table declaration. Rows cross threads (a write
  /// job's rows are read by its caller), so the memo is guarded.
  private let resolved = Mutex<[ObjectIdentifier: [Int]]>([:])

  init(_ names: [String]) {
    self.names = names
    // The first of two equal names wins, as SQLite's own lookup by name does.
    indexByName = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
  }

  var count: Int { names.count }

  /// The position of `name`, or nil when the result has no such column.
  public func index(of name: String) -> Int? { indexByName[name] }

  /// Where each of `table`'s columns is in this result, in the table's order: resolved by
  /// name the first time, then kept.
  /// - Throws: `StoreError.Kind.conversion` when the result lacks one of the columns.
  func positions<Record>(for table: TableDefinition<Record>) throws(StoreError) -> [Int] {
    let key = ObjectIdentifier(table)
    if let known = resolved.withLock({ $0[key] }) { return known }
    var positions: [Int] = []
    positions.reserveCapacity(table.columns.count)
    for column in table.columns {
      guard let index = indexByName[column.name] else {
        throw StoreError(
          kind: .conversion,
          message:
            "column \(column.name) of \(table.name) is not in the result (\(names.joined(separator: ", ")))")
      }
      positions.append(index)
    }
    resolved.withLock { $0[key] = positions }
    return positions
  }
}
