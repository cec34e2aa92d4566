import AnonAuthCrypto
import AnonAuthWire

/// How the daemon makes a new account's uid (`--uid-order`). Either way a uid is 28
/// characters of `[A-Za-z0-9]`, unique per project (docs/protocol.md §8).
///
/// `random`, the default, is Firebase's shape: all 28 from the CSPRNG. Every store B-tree
/// keyed by uid (the accounts, their sessions' and identities' indexes) then takes each
/// new account at a random place, and the clean-up pass, which deletes accounts in the
/// order they were made, dirties one page of each such tree per account: at five million
/// accounts about four pages read and seven written per deletion.
///
/// `creation` starts each uid with the second it was made, so those trees hold accounts
/// in the order they were made: a sign-up appends, and the clean-up deletes neighbours
/// that share pages, at a cost per deletion that does not grow with the store
/// (docs/benchmarks.md). The price is that a uid tells anyone who sees it when its
/// account was made, to the second.
public enum UIDOrder: String, Sendable, CaseIterable {
  case random
  case creation

  /// How many characters of a `creation` uid hold the second: base 62 in six digits
  /// counts 62^6 seconds, past the year 3700.
  static let secondDigits = 6
  static let length = 28
  /// The digits in ASCII order, so that uids sort as their seconds do.
  static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
  /// How many seconds the digits hold: 62^6.
  static let secondCapacity: Int64 = 56_800_235_584

  /// A new uid for an account made at `nowMs` (milliseconds since the Unix epoch).
  public func newLocalID(nowMs: Int64) throws(RPCError) -> String {
    do {
      switch self {
      case .random:
        return try SecureRandom.alphanumeric(Self.length)
      case .creation:
        return Self.secondPrefix(nowMs: nowMs)
          + (try SecureRandom.alphanumeric(Self.length - Self.secondDigits))
      }
    } catch {
      throw RPCError(.internalError, "random generator failed")
    }
  }

  /// The second of `nowMs` in `secondDigits` base-62 digits, most significant first;
  /// a time before the epoch or past the last second the digits hold is clamped to it.
  static func secondPrefix(nowMs: Int64) -> String {
    var second = min(max(nowMs / 1000, 0), secondCapacity - 1)
    var out = [UInt8](repeating: digits[0], count: secondDigits)
    for index in stride(from: secondDigits - 1, through: 0, by: -1) {
      out[index] = digits[Int(second % 62)]
      second /= 62
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// The second a `creation` uid was made in, or nil when its first characters are not
  /// base-62 digits (any uid of `random` may still decode to some second: only the
  /// store's settings say which order made it).
  public static func second(ofCreationUID uid: String) -> Int64? {
    let head = Array(uid.utf8.prefix(secondDigits))
    guard head.count == secondDigits else { return nil }
    var second: Int64 = 0
    for byte in head {
      guard let digit = digits.firstIndex(of: byte) else { return nil }
      second = second * 62 + Int64(digit)
    }
    return second
  }
}
