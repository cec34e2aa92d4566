/// One daemon setting: its flag, its `ANONAUTH_*` variable, its default, its unit and range,
/// its section and its help. The table in `Setting.all` is the single source for parsing,
/// range checks, `--help`, `--print-config` and docs/configuration.md
/// (`--print-reference configuration`).
public struct Setting: Sendable {
  public let name: String
  public let defaultValue: String?
  public let help: String
  /// Where the reference page lists it.
  public let section: SettingSection
  /// What a number counts; nil for text, addresses, paths and switches.
  public let unit: SettingUnit?
  /// The values a number may take, checked when the configuration is resolved; nil for
  /// anything that is not a number.
  public let range: ClosedRange<UInt64>?
  /// A switch takes no value on the command line (`--dev`); in the environment or the
  /// JSON file it is "true"/"false".
  public let isSwitch: Bool
  /// Shown masked by `--print-config`. No setting today holds a secret itself: the master
  /// key, the TLS private key and the admin key are passed as files (which deployments
  /// mount from their secret stores), so the effective configuration, which names only
  /// their paths, can be printed and shared. A setting that ever carries a secret inline
  /// must set this.
  public let isSecret: Bool

  public var flag: String { "--\(name)" }
  public var environmentName: String {
    "ANONAUTH_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
  }

  init(
    _ name: String, _ defaultValue: String?, _ help: String, section: SettingSection = .general,
    isSwitch: Bool = false, isSecret: Bool = false
  ) {
    self.name = name
    self.defaultValue = defaultValue
    self.help = help
    self.section = section
    self.unit = nil
    self.range = nil
    self.isSwitch = isSwitch
    self.isSecret = isSecret
  }

  /// A whole-number setting; `NumberSetting` is how code reads its typed default.
  init(
    number name: String, _ defaultValue: UInt64, _ unit: SettingUnit, _ range: ClosedRange<UInt64>,
    _ help: String, section: SettingSection
  ) {
    self.name = name
    self.defaultValue = String(defaultValue)
    self.help = help
    self.section = section
    self.unit = unit
    self.range = range
    self.isSwitch = false
    self.isSecret = false
  }
}

/// What a numeric setting counts, as the reference page and `--help` spell it.
public enum SettingUnit: String, Sendable {
  case bytes
  case milliseconds = "ms"
  case microseconds = "µs"
  case count
  case perSecond = "per second"
  case percent = "%"

  /// `number` with its unit, as `--help` and the reference page write it ("50 ms",
  /// "12%", "128").
  public func describe(_ number: UInt64) -> String {
    switch self {
    case .count: "\(number)"
    case .percent: "\(number)%"
    case .perSecond: "\(number) a second"
    case .bytes, .milliseconds, .microseconds: "\(number) \(rawValue)"
    }
  }
}

/// The reference page's sections, in the order it shows them.
public enum SettingSection: String, Sendable, CaseIterable {
  case general = "Data, listeners and logging"
  case security = "TLS, keys and trusted callers"
  case transport = "Transport limits"
  case timeouts = "Timeouts"
  case cleanup = "Clean-up and store writes"
  case admission = "Fair admission"
  case cluster = "Replicated store"
  case email = "Email actions"
  case testing = "Testing"
}
