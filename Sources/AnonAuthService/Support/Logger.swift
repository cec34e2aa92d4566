import AnonAuthCrypto
import Foundation
import Synchronization

/// One JSON object per line on stderr (docs/architecture.md, "Engineering rules"):
/// machines parse them, people read them with `jq`. Never give it a token, a password
/// or a key.
public struct Logger: Sendable {
  public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
    case debug, info, warning, error
    public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    public var description: String {
      switch self {
      case .debug: "debug"
      case .info: "info"
      case .warning: "warn"
      case .error: "error"
      }
    }
  }

  public let minimum: Level
  /// The most UTF-8 bytes of any one string in a log line; longer ones are cut at a
  /// character boundary and marked with their original length (see `LogValue.capped`).
  public static let maxFieldBytes = 256
  /// Takes a whole line, newline included, as the bytes it is written as.
  private let sink: @Sendable ([UInt8]) -> Void

  /// `sink` (for tests) gets each line as a string without its newline; the default
  /// writes the line's bytes to stderr as they were assembled.
  public init(minimum: Level = .info, sink: (@Sendable (String) -> Void)? = nil) {
    self.minimum = minimum
    if let sink {
      self.sink = { line in sink(String(decoding: line.dropLast(), as: UTF8.self)) }
    } else {
      self.sink = Logger.stderrSink
    }
  }

  /// A logger that drops everything, for tests that do not look at logs.
  public static let silent = Logger(minimum: .error, sink: { _ in })

  private static let writeLock = Mutex(())
  /// One `write(2)` per line (looping only on a short write), so lines from different
  /// threads never interleave.
  private static let stderrSink: @Sendable ([UInt8]) -> Void = { line in
    writeLock.withLock { _ in
      line.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
          let written = write(2, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
          if written > 0 {
            offset += written
          } else if written < 0 && errno == EINTR {
            continue
          } else {
            return  // stderr is gone: drop the line rather than spin
          }
        }
      }
    }
  }

  /// Whether a line at `level` would be written: callers that assemble fields skip the
  /// work when it would not.
  public func isEnabled(_ level: Level) -> Bool { level >= minimum }

  public func log(_ level: Level, _ message: String, _ fields: [String: LogValue] = [:]) {
    guard level >= minimum else { return }
    // Field values often carry client-chosen text (a method name, a request id): each
    // is capped so that one request cannot write megabytes of log.
    var object: [String: LogValue] = fields.mapValues { $0.capped(Logger.maxFieldBytes) }
    object["ts"] = .string(Logger.timestamp())
    object["level"] = .string(level.description)
    object["msg"] = LogValue.string(message).capped(Logger.maxFieldBytes)
    var line: [UInt8] = []
    line.reserveCapacity(256)
    LogValue.object(object).write(to: &line)
    line.append(0x0A)
    sink(line)
  }

  public func debug(_ message: String, _ fields: [String: LogValue] = [:]) { log(.debug, message, fields) }
  public func info(_ message: String, _ fields: [String: LogValue] = [:]) { log(.info, message, fields) }
  public func warning(_ message: String, _ fields: [String: LogValue] = [:]) {
    log(.warning, message, fields)
  }
  public func error(_ message: String, _ fields: [String: LogValue] = [:]) { log(.error, message, fields) }

  /// UTC with milliseconds (`2026-11-24T03:05:24.239Z`), written by hand: Foundation's
  /// ISO 8601 formatter cost more than the rest of a line.
  static func timestamp() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var seconds = now.tv_sec
    var parts = tm()
    gmtime_r(&seconds, &parts)
    var out: [UInt8] = []
    out.reserveCapacity(24)
    func digits(_ value: Int, _ count: Int) {
      var divisor = 1
      for _ in 1..<count { divisor *= 10 }
      var rest = value
      while divisor > 0 {
        out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (rest / divisor) % 10))
        rest %= divisor
        divisor /= 10
      }
    }
    digits(Int(parts.tm_year) + 1900, 4)
    out.append(UInt8(ascii: "-"))
    digits(Int(parts.tm_mon) + 1, 2)
    out.append(UInt8(ascii: "-"))
    digits(Int(parts.tm_mday), 2)
    out.append(UInt8(ascii: "T"))
    digits(Int(parts.tm_hour), 2)
    out.append(UInt8(ascii: ":"))
    digits(Int(parts.tm_min), 2)
    out.append(UInt8(ascii: ":"))
    digits(Int(parts.tm_sec), 2)
    out.append(UInt8(ascii: "."))
    digits(Int(now.tv_nsec) / 1_000_000, 3)
    out.append(UInt8(ascii: "Z"))
    return String(decoding: out, as: UTF8.self)
  }
}

/// A JSON value for a log field, serialized without Foundation's JSONSerialization so
/// that key order is stable and numbers stay integers.
public enum LogValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByBooleanLiteral
{
  case string(String)
  case int(Int64)
  case double(Double)
  case bool(Bool)
  case object([String: LogValue])

  public init(stringLiteral value: String) { self = .string(value) }
  public init(integerLiteral value: Int64) { self = .int(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }

  /// This value with every string cut to at most `maxBytes` UTF-8 bytes (at a scalar
  /// boundary) followed by `…[truncated, N bytes]`, N being the original length.
  public func capped(_ maxBytes: Int) -> LogValue {
    switch self {
    case .string(let s):
      let total = s.utf8.count
      guard total > maxBytes else { return self }
      var kept = String.UnicodeScalarView()
      var used = 0
      for scalar in s.unicodeScalars {
        let size = UTF8.width(scalar)
        guard used + size <= maxBytes else { break }
        kept.append(scalar)
        used += size
      }
      return .string(String(kept) + "…[truncated, \(total) bytes]")
    case .object(let o):
      return .object(o.mapValues { $0.capped(maxBytes) })
    case .int, .double, .bool:
      return self
    }
  }

  public var json: String {
    var out: [UInt8] = []
    out.reserveCapacity(256)
    write(to: &out)
    return String(decoding: out, as: UTF8.self)
  }

  /// Appends this value's JSON: objects with sorted keys, doubles with three decimals.
  func write(to out: inout [UInt8]) {
    switch self {
    case .string(let s): JSONValue.string(s).write(to: &out)
    case .int(let i): out.append(contentsOf: String(i).utf8)
    case .double(let d): out.append(contentsOf: Self.threeDecimals(d).utf8)
    case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
    case .object(let o):
      out.append(UInt8(ascii: "{"))
      for (index, member) in o.sorted(by: { $0.key < $1.key }).enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        JSONValue.string(member.key).write(to: &out)
        out.append(UInt8(ascii: ":"))
        member.value.write(to: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }
}

extension LogValue {
  /// `d` with exactly three decimals, as `%.3f` gives it, without a format string on
  /// every call line; `null` when not finite. A value a hair from a tie (1.2345 is stored
  /// as 1.23449999...) may round up where printf rounds down: one microsecond in a log.
  static func threeDecimals(_ d: Double) -> String {
    guard d.isFinite else { return "null" }
    let scaled = (d * 1000).rounded()
    guard abs(scaled) < 9e15 else { return String(format: "%.3f", d) }
    let thousandths = Int64(scaled)
    let magnitude = thousandths.magnitude
    let fraction = String(magnitude % 1000)
    let sign = thousandths < 0 ? "-" : ""
    return sign + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - fraction.count)
      + fraction
  }
}

/// JSON string quoting for the logger and the daemon's output lines.
public enum JSONText {
  public static func quote(_ s: String) -> String { JSONValue.quoted(s) }
}
