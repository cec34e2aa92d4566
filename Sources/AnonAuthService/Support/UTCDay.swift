/// "YYYY-MM-DD" of a UTC instant, for daily usage counters (civil-from-days, no
/// calendar objects on the hot path).
enum UTCDay {
  static func string(ms: Int64) -> String {
    let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
    func pad(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(y)-\(pad(m))-\(pad(d))"
  }
}
