/// A value as dqlite carries it: SQLite's five storage classes. The wire's extra type
/// codes (a boolean, a Unix time, an ISO 8601 string) arrive as the class they are stored
/// as, so callers see exactly what a local SQLite connection would give them.
public enum DqliteValue: Sendable, Hashable {
  case integer(Int64)
  case real(Double)
  case text(String)
  case blob([UInt8])
  case null
}

/// The type codes of dqlite's row headers and parameter tuples.
enum DqliteTypeCode: UInt8 {
  case integer = 1
  case real = 2
  case text = 3
  case blob = 4
  case null = 5
  case unixTime = 9
  case iso8601 = 10
  case boolean = 11
}
