import Foundation
import Synchronization
import Testing

@testable import AnonAuthService

/// The hand-written parts of a log line say what Foundation's formatters said.
@Suite struct LoggerFormatTests {
  @Test(arguments: [
    0, 0.0004, 0.0005, 0.0015, 1, 1.2346, 12.3456789, 999.9996, 1234567.891, -2.5, 1e-9, 86_400_000,
  ])
  func durationsHaveThreeDecimalsAsPrintfWrites(value: Double) {
    #expect(LogValue.threeDecimals(value) == String(format: "%.3f", value))
  }

  @Test func nonFiniteDurationsAreNull() {
    #expect(LogValue.threeDecimals(.nan) == "null")
    #expect(LogValue.threeDecimals(.infinity) == "null")
  }

  @Test func timestampsAreUTCWithMillisecondsAndNow() throws {
    let before = Date()
    let text = Logger.timestamp()
    let after = Date()
    #expect(text.utf8.count == 24)
    #expect(text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "\(text)")
    let parsed = try #require(
      try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    #expect(parsed.timeIntervalSince(before) > -0.002)
    #expect(parsed.timeIntervalSince(after) < 0.002)
  }

  @Test func aLineIsOneJSONObjectWithTheDuration() throws {
    let captured = Mutex<[String]>([])
    let logger = Logger(minimum: .info, sink: { line in captured.withLock { $0.append(line) } })
    #expect(!logger.isEnabled(.debug))
    #expect(logger.isEnabled(.info))
    logger.debug("hidden")
    logger.info("call", ["duration_ms": .double(1.5), "method": "/a.B/C"])
    let lines = captured.withLock { $0 }
    try #require(lines.count == 1)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
    #expect(object["msg"] as? String == "call")
    #expect(object["level"] as? String == "info")
    #expect(lines[0].contains("\"duration_ms\":1.500"))
  }
}
