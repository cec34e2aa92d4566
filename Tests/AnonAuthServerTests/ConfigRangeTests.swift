import Testing

@testable import AnonAuthServer

/// Every number is checked against the range its declaration gives, and a value outside
/// it is refused with one line naming the flag and the range.
@Suite struct ConfigRangeTests {
  static let numbers = Setting.all.filter { $0.range != nil }.map(\.name)

  private func refusal(_ name: String, _ value: String) -> String? {
    do {
      _ = try DaemonConfig.resolve(arguments: ["--dev", "--\(name)", value], environment: [:])
      return nil
    } catch {
      return error.description
    }
  }

  @Test(arguments: numbers)
  func aboveTheRangeIsRefusedNamingFlagAndRange(_ name: String) throws {
    let range = try #require(Setting.all.first { $0.name == name }?.range)
    let said = try #require(refusal(name, String(range.upperBound + 1)), "accepted above \(range)")
    #expect(
      said
        == "--\(name): expected a whole number in \(range.lowerBound)...\(range.upperBound), got \"\(range.upperBound + 1)\""
    )
  }

  @Test(arguments: numbers)
  func belowTheRangeIsRefused(_ name: String) throws {
    let range = try #require(Setting.all.first { $0.name == name }?.range)
    let below = range.lowerBound == 0 ? "-1" : String(range.lowerBound - 1)
    let said = try #require(refusal(name, below), "accepted below \(range)")
    #expect(said.hasPrefix("--\(name): expected a whole number in \(range.lowerBound)...\(range.upperBound)"))
  }

  @Test func helpShowsEachNumbersRangeAndUnit() {
    let help = DaemonConfig.helpText()
    #expect(help.contains("env ANONAUTH_IO_THREADS; default: 1; range 1...64\n"))
    #expect(help.contains("env ANONAUTH_MIN_CALL_TIMEOUT_MS; default: 50; range 1...60000 ms\n"))
    #expect(help.contains("env ANONAUTH_ADMISSION_IP_SHARE_PERCENT; default: 12; range 1...100%\n"))
  }

  /// The environment is checked the same way as the flag.
  @Test func theEnvironmentIsCheckedToo() {
    let said = configRefusal(["--dev"], environment: ["ANONAUTH_MAX_CONNECTIONS": "0"])
    #expect(said.hasPrefix("--max-connections: expected a whole number in 1...10000000"))
  }
}
