import Foundation

/// Times as people read them in tables and text (JSON keeps epoch milliseconds): UTC
/// ISO 8601, and for what is still to come, how soon ("in 42 s").
enum HumanTime {
  /// "2026-11-23T11:22:33Z"; "-" for 0 (not set).
  static func iso(ms: Int64) -> String {
    guard ms != 0 else { return "-" }
    return Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601)
  }

  /// "2026-11-23T11:22:33Z (in 42 s)" for a future time, the bare time otherwise.
  static func isoAndRelative(ms: Int64, nowMs: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) -> String {
    guard ms != 0 else { return "-" }
    let ahead = ms - nowMs
    return ahead > 0 ? "\(iso(ms: ms)) (in \(duration(ms: ahead)))" : iso(ms: ms)
  }

  /// The same for a time in whole seconds (JWT `exp`, `valid_since`).
  static func isoAndRelative(seconds: Int64) -> String {
    let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
    return overflow ? "\(seconds) s" : isoAndRelative(ms: ms)
  }

  /// "42 s", "5 min", "3 h", "12 d": the largest unit that fits, rounded down.
  static func duration(ms: Int64) -> String {
    let seconds = ms / 1000
    if seconds < 120 { return "\(seconds) s" }
    if seconds < 2 * 3600 { return "\(seconds / 60) min" }
    if seconds < 2 * 86400 { return "\(seconds / 3600) h" }
    return "\(seconds / 86400) d"
  }
}
