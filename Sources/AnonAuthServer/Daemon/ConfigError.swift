/// A bad setting: the daemon prints `description` as its one line on stderr and exits 2.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}
