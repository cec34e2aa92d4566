/// The `grpc-timeout` header: at most eight digits and a unit. Milliseconds while they
/// fit in eight digits (27 hours), whole seconds (rounded up, never shortening the
/// deadline) beyond.
public enum GRPCTimeout {
  public static func header(milliseconds: UInt32) -> String {
    if milliseconds <= 99_999_999 { return "\(milliseconds)m" }
    return "\((UInt64(milliseconds) + 999) / 1000)S"
  }
}
