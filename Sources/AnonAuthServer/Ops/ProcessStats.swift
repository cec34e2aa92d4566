import AnonAuthService
import Foundation
import Glibc

/// The daemon's own cost, under Prometheus' standard process metric names, so benches
/// (and dashboards) can tell what a call costs the server apart from its client.
enum ProcessStats {
  /// Resident set size, from /proc/self/statm.
  static func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// User plus system CPU time of every thread, with getrusage's microsecond resolution
  /// (/proc's clock ticks are too coarse for a per-call figure).
  static func cpuSeconds() -> Double {
    var usage = rusage()
    guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }

  /// Open file descriptors: the entries of /proc/self/fd, less the one reading it.
  static func openDescriptors() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return 0 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
      if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
    }
    return max(0, count - 1)
  }

  /// The soft RLIMIT_NOFILE: how many descriptors the process may hold.
  static func maxDescriptors() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    return Int(clamping: limit.rlim_cur)
  }

  /// Threads of the process, from the `Threads:` line of /proc/self/status.
  static func threads() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("Threads:") {
      return Int(line.dropFirst(8).trimmingCharacters(in: .whitespaces)) ?? 0
    }
    return 0
  }

  /// The process families of `MetricFamilies` in Prometheus text.
  static func prometheusText() -> String {
    typealias F = MetricFamilies
    return F.residentMemory.single(residentBytes())
      + F.cpuSeconds.single(String(format: "%.6f", cpuSeconds()))
      + F.openFDs.single(openDescriptors())
      + F.maxFDs.single(maxDescriptors())
      + F.threads.single(threads())
  }
}
