/// docs/configuration.md, made from the settings table so that the page cannot drift from
/// the code: one of the `ReferencePages` (`anonauthd --print-reference configuration`).
public enum ConfigReference {
  public static func markdown() -> String {
    var out = """
      # Configuration

      <!-- Generated from the settings table (Sources/AnonAuthServer/Daemon/Setting+Table.swift
           and NumberSetting.swift) by `anonauthd --print-reference configuration`.
           Do not edit: change the table and run `make reference-docs`. -->

      Every setting of `anonauthd` has a flag, an environment variable and a key in the
      JSON file named by `--config`. When a setting is given in more than one place, the
      flag wins over the environment variable, the variable over the JSON file, and the
      file over the default. The JSON file, named by `--config` or `ANONAUTH_CONFIG`, is an
      object keyed by the flag's name without its dashes
      (`{"data-dir": "/var/lib/anonauth", "max-connections": 5000}`); its values are
      strings, numbers or booleans, and a key that is no setting is refused.

      A switch (`--dev`) takes no value on the command line; in the environment or the file
      it is `true` or `false`. A number is a whole number in the range shown below: one
      outside it, like any other bad setting, stops the daemon before it starts, with exit
      code 2 and one line on stderr that names the flag and what it accepts.

      `anonauthd --print-config` prints the effective value of every setting and where it
      came from (`flag`, `env`, `file` or `default`), then exits; `anonauthd --help` lists
      the same settings briefly.

      Without `--dev`, `--tls-cert`, `--tls-key` and `--master-key-file` are required.

      """
    for section in SettingSection.allCases {
      let settings = Setting.all.filter { $0.section == section }
      if settings.isEmpty { continue }
      out += "\n## \(section.rawValue)\n\n"
      out += "| Flag | Environment variable | Default | Range | Description |\n"
      out += "|---|---|---|---|---|\n"
      for setting in settings {
        let cells = [
          "`\(setting.flag)`", "`\(setting.environmentName)`", defaultCell(setting), rangeCell(setting),
          cell(setting.help),
        ]
        out += "| " + cells.joined(separator: " | ") + " |\n"
      }
    }
    return out
  }

  static func defaultCell(_ setting: Setting) -> String {
    guard let value = setting.defaultValue else { return "(none)" }
    if value.isEmpty { return "(empty)" }
    guard let unit = setting.unit, let number = UInt64(value) else { return "`\(cell(value))`" }
    return unit.describe(number) + (readable(number, unit).map { " (\($0))" } ?? "")
  }

  static func rangeCell(_ setting: Setting) -> String {
    if setting.isSwitch { return "switch" }
    guard let range = setting.range, let unit = setting.unit else { return "" }
    if let low = readable(range.lowerBound, unit), let high = readable(range.upperBound, unit) {
      return "\(low) to \(high)"
    }
    return "\(range.lowerBound) to \(unit.describe(range.upperBound))"
  }

  /// A byte count in KiB, MiB, GiB or TiB, or milliseconds in seconds, when that reads
  /// better.
  static func readable(_ number: UInt64, _ unit: SettingUnit) -> String? {
    switch unit {
    case .bytes:
      for (size, name) in [(UInt64(1) << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
      where number >= size && number % size == 0 {
        return "\(number / size) \(name)"
      }
      return nil
    case .milliseconds where number >= 1000 && number % 1000 == 0:
      return "\(number / 1000) s"
    default:
      return nil
    }
  }

  /// Text safe inside a table cell.
  static func cell(_ text: String) -> String {
    text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
  }
}
