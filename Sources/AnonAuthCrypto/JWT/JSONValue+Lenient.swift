import Foundation

extension JSONValue {
  /// JSON from operators and admin callers (custom claims, a password-hash config), read
  /// as every version before the strict parser read it: Foundation's `JSONSerialization`
  /// also accepted trailing commas (`{"plan":"pro",}`). `SetCustomClaims`,
  /// `ImportAccounts` and the hash config keep accepting what they accepted, and claims
  /// stored then keep reaching the tokens. Text the strict parser takes is read by it; only
  /// the rest goes through Foundation. Everything else (tokens, key sets, providers'
  /// answers, what the server stored itself) is read strictly with `init(jsonBytes:)`.
  public init?(lenientJSONBytes bytes: [UInt8]) {
    if let value = JSONValue(jsonBytes: bytes) {
      self = value
      return
    }
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)),
      let value = JSONValue(foundation: object)
    else { return nil }
    self = value
  }

  /// The type `JSONSerialization` gives `true` and `false`: NSNumber bridges to Bool for
  /// any 0 or 1, so the class is what tells a boolean from a number.
  private static let booleanType = type(of: NSNumber(value: true))

  /// What `JSONSerialization` read, as a `JSONValue` (internal: the parser's tests
  /// compare the strict parser with Foundation through it).
  init?(foundation value: Any) {
    switch value {
    case is NSNull:
      self = .null
    case let string as String:
      self = .string(string)
    case let number as NSNumber:
      self = Self.number(number)
    case let array as [Any]:
      var elements: [JSONValue] = []
      for element in array {
        guard let converted = JSONValue(foundation: element) else { return nil }
        elements.append(converted)
      }
      self = .array(elements)
    case let dictionary as [String: Any]:
      var members: [String: JSONValue] = [:]
      for (key, element) in dictionary {
        guard let converted = JSONValue(foundation: element) else { return nil }
        members[key] = converted
      }
      self = .object(members)
    default:
      return nil
    }
  }

  private static func number(_ number: NSNumber) -> JSONValue {
    if type(of: number) == booleanType { return .bool(number.boolValue) }
    // Int64.min comes as an NSDecimalNumber with a double type code: its text says
    // whether it is an integer.
    if let decimal = number as? NSDecimalNumber {
      if let integer = Int64(decimal.stringValue) { return .int(integer) }
      return .double(decimal.doubleValue)
    }
    switch String(cString: number.objCType) {
    case "d", "f":
      return number.doubleValue.isFinite ? .double(number.doubleValue) : .null
    case "Q", "L", "I", "S", "C":
      let value = number.uint64Value
      return value <= UInt64(Int64.max) ? .int(Int64(value)) : .double(number.doubleValue)
    default:
      return .int(number.int64Value)
    }
  }
}
