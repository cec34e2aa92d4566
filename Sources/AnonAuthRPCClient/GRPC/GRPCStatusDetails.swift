import AnonAuthWire

/// Reads `grpc-status-details-bin`: base64 (padded or not, as gRPC's binary headers may
/// come) of a `google.rpc.Status` whose `details` carry a `google.rpc.ErrorInfo` with
/// AnonAuth's reason and its details. A hand-written reader of the few fields needed, so
/// the client needs no generated code for Google's protos; anything it cannot follow
/// gives nil, and the caller falls back to the status code alone.
public enum GRPCStatusDetails {
  /// What the header said.
  public struct Decoded: Equatable, Sendable {
    public var code: Int32
    public var message: String
    /// ErrorInfo's `reason`, nil when no ErrorInfo came.
    public var reason: String?
    /// ErrorInfo's `metadata`.
    public var details: [String: String]
  }

  static let errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

  /// Decodes the header's value; nil when it is not base64 of a `google.rpc.Status`.
  public static func decode(header: some Collection<UInt8>) -> Decoded? {
    guard let bytes = Base64.decode(header) else { return nil }
    return decodeStatus(bytes)
  }

  /// `google.rpc.Status`: 1 code (int32), 2 message (string), 3 details (repeated Any).
  static func decodeStatus(_ bytes: [UInt8]) -> Decoded? {
    var decoded = Decoded(code: 0, message: "", reason: nil, details: [:])
    var reader = ProtoFieldReader(bytes)
    while let field = reader.next() {
      switch (field.number, field.value) {
      case (1, .varint(let value)): decoded.code = Int32(truncatingIfNeeded: value)
      case (2, .bytes(let text)): decoded.message = String(decoding: text, as: UTF8.self)
      case (3, .bytes(let any)):
        guard let info = errorInfo(inAny: any) else { continue }
        decoded.reason = info.reason
        decoded.details.merge(info.details) { _, new in new }
      default: continue
      }
    }
    return reader.failed ? nil : decoded
  }

  /// `google.protobuf.Any` (1 type_url, 2 value) holding an ErrorInfo, else nil.
  private static func errorInfo(inAny bytes: ArraySlice<UInt8>) -> (
    reason: String, details: [String: String]
  )? {
    var typeURL = ""
    var value: ArraySlice<UInt8> = []
    var reader = ProtoFieldReader(Array(bytes))
    while let field = reader.next() {
      switch (field.number, field.value) {
      case (1, .bytes(let text)): typeURL = String(decoding: text, as: UTF8.self)
      case (2, .bytes(let payload)): value = payload
      default: continue
      }
    }
    guard !reader.failed, typeURL == errorInfoType else { return nil }
    // ErrorInfo: 1 reason, 2 domain, 3 metadata (map<string, string>: entries of 1 key, 2 value).
    var reason = ""
    var details: [String: String] = [:]
    var info = ProtoFieldReader(Array(value))
    while let field = info.next() {
      switch (field.number, field.value) {
      case (1, .bytes(let text)): reason = String(decoding: text, as: UTF8.self)
      case (3, .bytes(let entry)):
        var key = ""
        var text = ""
        var pair = ProtoFieldReader(Array(entry))
        while let part = pair.next() {
          switch (part.number, part.value) {
          case (1, .bytes(let k)): key = String(decoding: k, as: UTF8.self)
          case (2, .bytes(let v)): text = String(decoding: v, as: UTF8.self)
          default: continue
          }
        }
        guard !pair.failed else { return nil }
        details[key] = text
      default: continue
      }
    }
    return info.failed ? nil : (reason, details)
  }
}

/// Standard base64 (RFC 4648 §4), with or without padding: gRPC senders may omit it.
enum Base64 {
  static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
    var out: [UInt8] = []
    out.reserveCapacity(text.count * 3 / 4)
    var accumulator: UInt32 = 0
    var bits = 0
    var padding = 0
    for byte in text {
      if byte == UInt8(ascii: "=") {
        padding += 1
        continue
      }
      guard padding == 0, let value = sextet(byte) else { return nil }
      accumulator = accumulator << 6 | UInt32(value)
      bits += 6
      if bits >= 8 {
        bits -= 8
        out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
      }
    }
    // Six leftover bits cannot come from whole bytes; more than two pads is not base64.
    guard bits != 6, padding <= 2 else { return nil }
    return out
  }

  private static func sextet(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
    case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
    case UInt8(ascii: "+"): 62
    case UInt8(ascii: "/"): 63
    default: nil
    }
  }
}
