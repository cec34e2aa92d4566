import Foundation

extension JSONValue {
  /// Parses JSON text (top-level object or array) with Foundation's `JSONSerialization`;
  /// nil when it is not valid JSON or holds a number no Swift type can represent.
  public init?(jsonBytes: [UInt8]) {
    guard let object = try? JSONSerialization.jsonObject(with: Data(jsonBytes)) else { return nil }
    self.init(foundation: object)
  }

  /// The type `JSONSerialization` gives `true` and `false`: NSNumber bridges to Bool for
  /// any 0 or 1, so the class is what tells a boolean from a number.
  private static let booleanType = type(of: NSNumber(value: true))

  /// Converts what `JSONSerialization` returns; nil for anything else.
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
      elements.reserveCapacity(array.count)
      for element in array {
        guard let converted = JSONValue(foundation: element) else { return nil }
        elements.append(converted)
      }
      self = .array(elements)
    case let dictionary as [String: Any]:
      var members: [String: JSONValue] = [:]
      members.reserveCapacity(dictionary.count)
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
    // JSONSerialization gives Int64.min as an NSDecimalNumber with a double type code:
    // its text says whether it is an integer.
    if let decimal = number as? NSDecimalNumber {
      if let integer = Int64(decimal.stringValue) { return .int(integer) }
      return .double(decimal.doubleValue)
    }
    switch String(cString: number.objCType) {
    case "d", "f":
      return .double(number.doubleValue)
    case "Q", "L", "I", "S", "C":
      // Unsigned: above Int64.max it only fits a double.
      let value = number.uint64Value
      return value <= UInt64(Int64.max) ? .int(Int64(value)) : .double(number.doubleValue)
    default:
      return .int(number.int64Value)
    }
  }
}
