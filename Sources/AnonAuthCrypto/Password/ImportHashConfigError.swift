/// Why a password-hash config was refused, worded for the person who pasted it into the
/// CLI: the message names the key or value at fault, never a secret's bytes.
public struct ImportHashConfigError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of mistake, for callers and tests that branch on it; the message is for people.
  public enum Kind: Sendable, Equatable {
    /// Not a `hash_config { ... }` block or a JSON object, or a line that is not `key: value`.
    case syntax
    /// A key this parser does not know.
    case unknownKey
    /// The same setting given twice (perhaps under two spellings).
    case duplicateKey
    /// An algorithm AnonAuth does not check.
    case unknownAlgorithm
    /// A setting the algorithm needs is absent.
    case missing
    /// A number outside the bounds the algorithm allows.
    case outOfRange
    /// A value of the wrong form: not base64, not a whole number, not a known order.
    case invalidValue
    /// Input longer than any real config.
    case tooLarge
    /// A sealed encoding of another version or shape.
    case invalidEncoding
  }

  public let kind: Kind
  public let message: String

  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  public var description: String { "password hash config: \(message)" }
}
