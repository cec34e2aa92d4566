import Foundation
import Testing

@testable import AnonAuthServer

/// docs/configuration.md: made from the settings table, listing every setting, and the
/// committed page is the one the table makes.
@Suite struct ConfigReferenceTests {
  @Test func everySettingAppearsWithItsVariableAndDefault() {
    let page = ConfigReference.markdown()
    for setting in Setting.all {
      let row = page.split(separator: "\n").first { $0.hasPrefix("| `\(setting.flag)` |") }
      #expect(row != nil, "\(setting.name)")
      #expect(row?.contains("`\(setting.environmentName)`") == true, "\(setting.name)")
    }
    #expect(page.contains("| `--max-frame-size` | `ANONAUTH_MAX_FRAME_SIZE` | 4194304 bytes (4 MiB) |"))
    #expect(page.contains("| 1 KiB to 64 MiB |"))
    #expect(
      page.contains("| `--min-call-timeout-ms` | `ANONAUTH_MIN_CALL_TIMEOUT_MS` | 50 ms | 1 to 60000 ms |"))
    #expect(page.contains("| `--master-key-file` | `ANONAUTH_MASTER_KEY_FILE` | (none) |"))
    for section in SettingSection.allCases {
      #expect(page.contains("\n## \(section.rawValue)\n"), "\(section)")
    }
  }

  @Test func everyNumberHasAUnitAndARangeHoldingItsDefault() throws {
    for setting in Setting.all where setting.range != nil || setting.unit != nil {
      let range = try #require(setting.range, "\(setting.name)")
      #expect(setting.unit != nil, "\(setting.name)")
      let value = try #require(setting.defaultValue.flatMap { UInt64($0) }, "\(setting.name)")
      #expect(range.contains(value), "\(setting.name)")
    }
    #expect(Setting.all.filter { $0.range != nil }.count >= 27)
    #expect(Set(Setting.all.map(\.name)).count == Setting.all.count)
  }

  /// The page a reader sees is the one the code makes (`make reference-docs` rewrites it).
  @Test func committedPageIsTheGeneratedOne() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let committed = try String(
      contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
    #expect(
      committed == ConfigReference.markdown(), "docs/configuration.md is stale: run 'make reference-docs'")
  }

  @Test func theDaemonPrintsThePage() throws {
    let printed = try runDaemon(["--print-reference", "configuration"])
    #expect(printed.status == 0)
    #expect(printed.stdout == ConfigReference.markdown())
  }
}
