import AnonAuthService
import Synchronization
import Testing

@Suite struct LoggerCapTests {
  func lines(_ body: (Logger) -> Void) -> [String] {
    let captured = Mutex<[String]>([])
    let logger = Logger(minimum: .debug, sink: { line in captured.withLock { $0.append(line) } })
    body(logger)
    return captured.withLock { $0 }
  }

  @Test func capsEveryClientChosenString() throws {
    let method = String(repeating: "\u{01}", count: 1 << 20)
    let out = lines {
      $0.info("call", ["method": .string(method), "nested": .object(["x": .string(method)])])
    }
    let line = try #require(out.first)
    // 256 control characters escaped to 6 bytes each, twice, plus the rest of the line.
    // Bools, so that a failure does not print megabytes.
    let size = line.utf8.count
    let marked = line.contains("[truncated, 1048576 bytes]")
    #expect(size < 4 * 1024)
    #expect(marked)
  }

  @Test func keepsShortStringsAsTheyAre() throws {
    let out = lines { $0.info("call", ["method": "/anonauth.v1.AccountService/SignUp"]) }
    let line = try #require(out.first)
    #expect(line.contains("\"method\":\"/anonauth.v1.AccountService/SignUp\""))
    #expect(!line.contains("truncated"))
  }

  @Test func cutsAtACharacterBoundary() {
    let capped = LogValue.string(String(repeating: "é", count: 200)).capped(255)
    #expect(capped == .string(String(repeating: "é", count: 127) + "…[truncated, 400 bytes]"))
    #expect(LogValue.string("abc").capped(3) == .string("abc"))
    #expect(LogValue.int(5).capped(0) == .int(5))
  }
}
