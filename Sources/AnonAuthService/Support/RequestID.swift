/// Request ids for calls that did not bring one: 16 hex digits, enough to find a call's
/// log lines, not a secret.
public enum RequestID {
  public static func make() -> String {
    var rng = SystemRandomNumberGenerator()
    let value = rng.next() as UInt64
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }
}
