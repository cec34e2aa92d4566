import AnonAuthWire

/// Email addresses as accounts store them: one spelling per mailbox, so that "one
/// account per email" holds.
///
/// Normalisation follows Firebase Authentication, which lowercases the whole address,
/// local part included (RFC 5321 lets a server treat the local part as case-sensitive;
/// almost none does, and two accounts for `Ann@x.com` and `ann@x.com` would be worse).
/// Surrounding white space is trimmed.
///
/// Validation accepts the addresses people have: a dot-atom local part (RFC 5322 `atext`
/// and dots, at most 64 bytes) and a DNS domain of at least two labels whose last label
/// is not all digits; at most 254 bytes in all. Not accepted: quoted local parts, domain
/// literals (`[192.0.2.1]`) and non-ASCII addresses (an internationalised domain is
/// written in its `xn--` form).
public enum EmailAddress {
  public static let maximumLength = 254

  private static let atext = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+/=?^_`{|}~-".utf8)

  /// The normalised address, or nil when it is not a valid one.
  public static func normalize(_ raw: String) -> String? {
    let trimmed = raw.utf8.drop { isSpace($0) }.reversed().drop { isSpace($0) }.reversed()
    guard !trimmed.isEmpty, trimmed.count <= maximumLength, trimmed.allSatisfy({ $0 < 0x80 }) else {
      return nil
    }
    let lower = trimmed.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }
    let parts = lower.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
    guard parts.count == 2, validLocalPart(parts[0]), validDomain(parts[1]) else { return nil }
    return String(decoding: lower, as: UTF8.self)
  }

  /// The normalised address.
  /// - Throws: `INVALID_EMAIL`.
  static func require(_ raw: String) throws(RPCError) -> String {
    guard let email = normalize(raw) else { throw RPCError(.invalidEmail, "the email address is not valid") }
    return email
  }

  private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

  private static func validLocalPart(_ local: ArraySlice<UInt8>) -> Bool {
    guard (1...64).contains(local.count) else { return false }
    let atoms = local.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    return atoms.allSatisfy { !$0.isEmpty && $0.allSatisfy { atext.contains($0) } }
  }

  private static func validDomain(_ domain: ArraySlice<UInt8>) -> Bool {
    guard (1...253).contains(domain.count) else { return false }
    let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard labels.count >= 2 else { return false }
    for label in labels {
      guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-"),
        label.allSatisfy({ isLowerAlnum($0) || $0 == UInt8(ascii: "-") })
      else { return false }
    }
    guard let top = labels.last, top.contains(where: { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") })
    else { return false }
    return true
  }

  private static func isLowerAlnum(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
      || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }
}
