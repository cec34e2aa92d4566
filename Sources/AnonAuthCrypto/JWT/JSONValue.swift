/// A JSON value for JWT headers and claims. Claims carry nested objects
/// (`firebase.identities`) and admin-set custom claims, so a fixed struct would not do;
/// integers and doubles are separate cases so that `iat`/`exp` stay integers on the wire.
public enum JSONValue: Sendable, Hashable {
  case null
  case bool(Bool)
  case int(Int64)
  case double(Double)
  case string(String)
  case array([JSONValue])
  /// Encoded with keys in sorted order, so equal objects give equal bytes.
  case object([String: JSONValue])
}

extension JSONValue {
  /// The string, if this is one.
  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The integer, if this is one; an integral double (`1.0`, `1e3`) in Int64 range counts,
  /// since JSON does not distinguish them.
  public var int64Value: Int64? {
    switch self {
    case .int(let value): return value
    case .double(let value):
      guard value.rounded() == value, value >= -9.223_372_036_854_775_808e18,
        value < 9.223_372_036_854_775_808e18
      else { return nil }
      return Int64(value)
    default: return nil
    }
  }

  /// The boolean, if this is one (numbers are not booleans).
  public var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  /// The members, if this is an object.
  public var objectValue: [String: JSONValue]? {
    if case .object(let value) = self { return value }
    return nil
  }

  /// The elements, if this is an array.
  public var arrayValue: [JSONValue]? {
    if case .array(let value) = self { return value }
    return nil
  }

  /// The member `key` of an object; nil for other values or a missing key.
  public subscript(key: String) -> JSONValue? { objectValue?[key] }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
  ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral,
  ExpressibleByNilLiteral
{
  public init(stringLiteral value: String) { self = .string(value) }
  public init(integerLiteral value: Int64) { self = .int(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(floatLiteral value: Double) { self = .double(value) }
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  public init(nilLiteral: ()) { self = .null }
  /// A later duplicate key wins, as in JSON parsers.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
}
