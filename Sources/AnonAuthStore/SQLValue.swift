/// One SQLite value, bound as an argument or read from a row.
///
/// The five cases are SQLite's own storage classes, so nothing is lost or guessed on the
/// way in or out; the typed accessors of `Row` do the conversions callers want.
public enum SQLValue: Sendable, Hashable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  case blob([UInt8])

  /// A Bool as SQLite stores it (0 or 1): SQLite has no boolean type.
  public static func bool(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }

  /// An Int without spelling the widening at every call site.
  public static func int(_ value: Int) -> SQLValue { .integer(Int64(value)) }

  /// `nil` binds NULL, so optional columns need no branch at the call site.
  public static func optional(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }

  /// `nil` binds NULL, so optional columns need no branch at the call site.
  public static func optional(_ value: Int64?) -> SQLValue { value.map(SQLValue.integer) ?? .null }

  /// `nil` binds NULL, so optional columns need no branch at the call site.
  public static func optional(_ value: Double?) -> SQLValue { value.map(SQLValue.real) ?? .null }

  /// `nil` binds NULL, so optional columns need no branch at the call site.
  public static func optional(_ value: [UInt8]?) -> SQLValue { value.map(SQLValue.blob) ?? .null }

  /// The storage class name, for error messages.
  var typeName: String {
    switch self {
    case .null: "null"
    case .integer: "integer"
    case .real: "real"
    case .text: "text"
    case .blob: "blob"
    }
  }
}

/// Literals keep argument lists short: `[1, "name", .null]`. There is deliberately no
/// `nil` literal: it would make `SQLValue?` ambiguous, and a missing value turn into NULL.
extension SQLValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
  ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
  public init(integerLiteral value: Int64) { self = .integer(value) }
  public init(floatLiteral value: Double) { self = .real(value) }
  public init(stringLiteral value: String) { self = .text(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
}
