extension JSONValue {
  /// Parses JSON text whose top level is an object or an array (`JSONParser` says exactly
  /// what it accepts); nil when it is not valid JSON or holds a number no finite double
  /// can represent.
  public init?(jsonBytes: [UInt8]) {
    guard let value = JSONParser.parse(jsonBytes) else { return nil }
    self = value
  }
}

extension JSONValue {
  /// How deeply arrays and objects may nest in what `init(jsonBytes:)` accepts, for the
  /// pages and answers that state the limit.
  public static let maximumNestingDepth = JSONParser.maximumDepth
}
