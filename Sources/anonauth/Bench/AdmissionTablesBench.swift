import AnonAuthService
import Foundation

/// `anonauth bench admission-tables`: what admitting one unit of work costs when the
/// admission tables (`Admission`, keyed by end-user address) hold few or many addresses,
/// in this process: a daemon would need a million sign-ups from a million addresses
/// before the first measured call, and its per-address sign-up quota (a store table)
/// would be measured with it.
///
/// For each size in `--addresses` (default 1000,1000000): a fresh `Admission` whose
/// signing lane keeps a rate per address (1,000,000 a second: never refused) and no share
/// limit; every address admitted once (the fill, not timed); then `--admits` (default
/// 200,000) admissions, each left at once, cycling through the addresses. The clock
/// stands still, so every address stays owed and tracked: the tables' worst case. Twice
/// per size: with the key cap above the size (every address tracked), and with the
/// daemon's default cap (`AdmissionLimits.maxKeys`, pruned when full). Three rounds,
/// the median's process CPU per admission (and the slowest round's), and each size's
/// ratio to the first.
///
/// Then the failed-sign-in throttle (`SignInThrottle`, the daemon's defaults: at most
/// 100,000 failure counters): each size's addresses fail once (the fill), then
/// `--admits` attempts, each reserved and given back at once (`release`), cycling
/// through the addresses: CPU per attempt, the same way.
enum AdmissionTablesBench {
  struct Row {
    let addresses: Int
    let maxKeys: Int
    /// True with the daemon's default key cap, false with a cap above the size.
    let defaultCap: Bool
    let cpuNs: Double
    /// The slowest round's: a prune that stalls shows here when the median hides it.
    let slowestNs: Double
    let trackedKeys: Int
  }

  static func run(_ arguments: Arguments) throws(CLIError) {
    let sizes = try parseSizes(arguments["addresses"] ?? "1000,1000000")
    let admits = try BenchCommand.int(arguments, "admits", 200_000)
    let daemonCap = AdmissionLimits().maxKeys
    var rows: [Row] = []
    for cap in [nil, daemonCap] {
      for size in sizes {
        rows.append(
          measure(addresses: size, maxKeys: cap ?? 2 * size, defaultCap: cap != nil, admits: admits))
      }
    }
    let throttle = sizes.map { measureThrottle(addresses: $0, attempts: admits) }
    if arguments.has("json") {
      let attempts = throttle.map { row in
        "{\"addresses\":\(row.addresses),\"cpu_ns_per_attempt\":\(String(format: "%.1f", row.cpuNs)),"
          + "\"slowest_round_ns_per_attempt\":\(String(format: "%.1f", row.slowestNs)),"
          + "\"tracked_keys\":\(row.trackedKeys)}"
      }
      let items = rows.map { row in
        "{\"addresses\":\(row.addresses),\"max_keys\":\(row.maxKeys),\"default_cap\":\(row.defaultCap),"
          + "\"cpu_ns_per_admit\":\(String(format: "%.1f", row.cpuNs)),"
          + "\"slowest_round_ns_per_admit\":\(String(format: "%.1f", row.slowestNs)),\"tracked_keys\":\(row.trackedKeys)}"
      }
      print(
        "{\"bench\":\"admission-tables\",\"admits\":\(admits),\"rows\":[\(items.joined(separator: ","))],"
          + "\"throttle\":[\(attempts.joined(separator: ","))]}")
      return
    }
    print("admission-tables: \(admits) admissions per round, process CPU per admission (median of 3)")
    for row in rows {
      let base = rows.first { $0.defaultCap == row.defaultCap }
      let ratio = base.map { row.cpuNs / $0.cpuNs } ?? 1
      print(
        "  \(row.addresses) addresses, cap \(row.maxKeys): \(String(format: "%.0f", row.cpuNs)) ns"
          + " (slowest round \(String(format: "%.0f", row.slowestNs)) ns)"
          + " (\(row.trackedKeys) keys tracked), \(String(format: "%.2f", ratio))x")
    }
    print("sign-in throttle: \(admits) attempts per round, process CPU per attempt (median of 3)")
    for row in throttle {
      let ratio = throttle.first.map { row.cpuNs / $0.cpuNs } ?? 1
      print(
        "  \(row.addresses) addresses: \(String(format: "%.0f", row.cpuNs)) ns"
          + " (slowest round \(String(format: "%.0f", row.slowestNs)) ns)"
          + " (\(row.trackedKeys) keys tracked), \(String(format: "%.2f", ratio))x")
    }
  }

  /// The sign-in throttle with the daemon's defaults: every address fails once, then
  /// attempts reserved and given back, cycling through the addresses, the clock standing.
  static func measureThrottle(addresses: Int, attempts: Int) -> Row {
    let throttle = SignInThrottle()
    let keys = (0..<addresses).map { "10.\($0 >> 16 & 255).\($0 >> 8 & 255).\($0 & 255)" }
    let now: Int64 = 1_000_000_000_000
    for key in keys { _ = throttle.reserve(account: nil, ip: key, nowMs: now) }
    var rounds: [Double] = []
    for _ in 0..<3 {
      let start = cpuNs()
      for index in 0..<attempts {
        let key = keys[index % addresses]
        if throttle.reserve(account: nil, ip: key, nowMs: now) == nil {
          throttle.release(account: nil, ip: key, reservedAtMs: now)
        }
      }
      rounds.append(Double(cpuNs() - start) / Double(attempts))
    }
    rounds.sort()
    return Row(
      addresses: addresses, maxKeys: 200_000, defaultCap: true, cpuNs: rounds[1], slowestNs: rounds[2],
      trackedKeys: throttle.trackedKeys)
  }

  static func parseSizes(_ text: String) throws(CLIError) -> [Int] {
    let sizes = text.split(separator: ",").compactMap { Int($0) }
    guard !sizes.isEmpty, sizes.count == text.split(separator: ",").count,
      sizes.allSatisfy({ $0 > 0 && $0 <= 1 << 24 })
    else { throw .usage("--addresses expects sizes from 1 to 16777216, separated by commas") }
    return sizes
  }

  static func measure(addresses: Int, maxKeys: Int, defaultCap: Bool, admits: Int) -> Row {
    var limits = AdmissionLimits.off
    limits.signing = .init(perIP: 1_000_000, perProject: 0)
    limits.maxKeys = maxKeys
    let admission = Admission(limits: limits, places: { _ in 1024 }, clock: ManualClock())
    let keys = (0..<addresses).map { "10.\($0 >> 16 & 255).\($0 >> 8 & 255).\($0 & 255)" }
    for key in keys { admitOnce(admission, key) }
    var rounds: [Double] = []
    for _ in 0..<3 {
      let start = cpuNs()
      for index in 0..<admits { admitOnce(admission, keys[index % addresses]) }
      rounds.append(Double(cpuNs() - start) / Double(admits))
    }
    rounds.sort()
    return Row(
      addresses: addresses, maxKeys: maxKeys, defaultCap: defaultCap, cpuNs: rounds[1],
      slowestNs: rounds[2], trackedKeys: admission.trackedKeys)
  }

  private static func admitOnce(_ admission: Admission, _ key: String) {
    if let ticket = try? admission.admit(.signing, .init(projectID: "bench-project", ipKey: key)) {
      ticket.leave()
    }
  }

  /// This process's CPU time so far, in nanoseconds.
  private static func cpuNs() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
  }
}
