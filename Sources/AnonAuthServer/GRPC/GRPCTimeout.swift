/// The `grpc-timeout` request header: 1 to 8 ASCII digits and a unit (`H` hours, `M`
/// minutes, `S` seconds, `m` milliseconds, `u` microseconds, `n` nanoseconds), as gRPC's
/// HTTP/2 protocol defines it. A value that does not parse is answered as grpc-go does
/// (trailers-only, HTTP 400, `INTERNAL` "malformed grpc-timeout"), not ignored: the
/// client asked for a deadline it would not get.
enum GRPCTimeout {
  /// The timeout in nanoseconds, or nil when `value` is not a timeout. A value past what
  /// 64 bits of nanoseconds hold (99,999,999 hours) is that maximum.
  static func nanoseconds(_ value: String) -> UInt64? {
    let bytes = Array(value.utf8)
    guard bytes.count >= 2, bytes.count <= 9, let unit = bytes.last, let scale = nanosPerUnit(unit) else {
      return nil
    }
    var amount: UInt64 = 0
    for byte in bytes.dropLast() {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      amount = amount * 10 + UInt64(byte - UInt8(ascii: "0"))  // at most 8 digits: no overflow
    }
    let (nanos, overflow) = amount.multipliedReportingOverflow(by: scale)
    return overflow ? UInt64.max : nanos
  }

  /// A timeout as the whole milliseconds `ConnectionCalls.startCall` takes: rounded up
  /// (a deadline is never made shorter than asked), at least 1 (0 there means "the
  /// server's default", which a client that sent `0n` did not ask for), at most
  /// `UInt32.max` (49 days, the native `timeout_ms`'s range).
  static func milliseconds(fromNanos nanos: UInt64) -> UInt32 {
    let millis = nanos / 1_000_000 + (nanos % 1_000_000 == 0 ? 0 : 1)
    return UInt32(clamping: max(1, millis))
  }

  private static func nanosPerUnit(_ unit: UInt8) -> UInt64? {
    switch unit {
    case UInt8(ascii: "H"): 3_600_000_000_000
    case UInt8(ascii: "M"): 60_000_000_000
    case UInt8(ascii: "S"): 1_000_000_000
    case UInt8(ascii: "m"): 1_000_000
    case UInt8(ascii: "u"): 1_000
    case UInt8(ascii: "n"): 1
    default: nil
    }
  }
}
