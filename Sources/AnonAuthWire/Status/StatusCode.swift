/// A gRPC canonical status code (docs/protocol.md §4).
///
/// A struct over a raw value rather than a closed enum, so that a code this build does
/// not know still round-trips from the wire instead of failing to decode.
public struct StatusCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  public var rawValue: Int32
  public init(rawValue: Int32) { self.rawValue = rawValue }

  public static let ok = StatusCode(rawValue: 0)
  public static let cancelled = StatusCode(rawValue: 1)
  public static let unknown = StatusCode(rawValue: 2)
  public static let invalidArgument = StatusCode(rawValue: 3)
  public static let deadlineExceeded = StatusCode(rawValue: 4)
  public static let notFound = StatusCode(rawValue: 5)
  public static let alreadyExists = StatusCode(rawValue: 6)
  public static let permissionDenied = StatusCode(rawValue: 7)
  public static let resourceExhausted = StatusCode(rawValue: 8)
  public static let failedPrecondition = StatusCode(rawValue: 9)
  public static let aborted = StatusCode(rawValue: 10)
  public static let outOfRange = StatusCode(rawValue: 11)
  public static let unimplemented = StatusCode(rawValue: 12)
  public static let internalError = StatusCode(rawValue: 13)
  public static let unavailable = StatusCode(rawValue: 14)
  public static let dataLoss = StatusCode(rawValue: 15)
  public static let unauthenticated = StatusCode(rawValue: 16)

  private static let names: [Int32: String] = [
    0: "OK", 1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION", 10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED",
    13: "INTERNAL", 14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED",
  ]

  public var description: String { Self.names[rawValue] ?? "CODE_\(rawValue)" }
}
