import AnonAuthCrypto
import Foundation
import Synchronization

/// One JSON object per line on stderr (DESIGN.md "Logs"): machines parse them, people
/// read them with `jq`. Never give it a token, a password or a key.
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
  private let sink: @Sendable (String) -> Void

  public init(minimum: Level = .info, sink: (@Sendable (String) -> Void)? = nil) {
    self.minimum = minimum
    self.sink = sink ?? Logger.stderrSink
  }

  /// A logger that drops everything, for tests that do not look at logs.
  public static let silent = Logger(minimum: .error, sink: { _ in })

  private static let writeLock = Mutex(())
  private static let stderrSink: @Sendable (String) -> Void = { line in
    writeLock.withLock { _ in
      FileHandle.standardError.write(Data((line + "\n").utf8))
    }
  }

  public func log(_ level: Level, _ message: String, _ fields: [String: LogValue] = [:]) {
    guard level >= minimum else { return }
    // Field values often carry client-chosen text (a method name, a request id): each
    // is capped so that one request cannot write megabytes of log.
    var object: [String: LogValue] = fields.mapValues { $0.capped(Logger.maxFieldBytes) }
    object["ts"] = .string(Logger.timestamp())
    object["level"] = .string(level.description)
    object["msg"] = LogValue.string(message).capped(Logger.maxFieldBytes)
    sink(LogValue.object(object).json)
  }

  public func debug(_ message: String, _ fields: [String: LogValue] = [:]) { log(.debug, message, fields) }
  public func info(_ message: String, _ fields: [String: LogValue] = [:]) { log(.info, message, fields) }
  public func warning(_ message: String, _ fields: [String: LogValue] = [:]) {
    log(.warning, message, fields)
  }
  public func error(_ message: String, _ fields: [String: LogValue] = [:]) { log(.error, message, fields) }

  static func timestamp() -> String {
    let now = Date()
    let formatter = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    return now.formatted(formatter)
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
    switch self {
    case .string(let s): return JSONText.quote(s)
    case .int(let i): return String(i)
    case .double(let d): return d.isFinite ? String(format: "%.3f", d) : "null"
    case .bool(let b): return b ? "true" : "false"
    case .object(let o):
      let body = o.keys.sorted().map { key in
        "\(JSONText.quote(key)):\(o[key]?.json ?? "null")"
      }
      return "{" + body.joined(separator: ",") + "}"
    }
  }
}

/// JSON string quoting for the logger and the daemon's output lines.
public enum JSONText {
  public static func quote(_ s: String) -> String { JSONValue.quoted(s) }
}
