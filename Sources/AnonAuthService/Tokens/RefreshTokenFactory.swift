import AnonAuthCrypto
import AnonAuthWire

/// Refresh tokens: 256 bits from the CSPRNG behind an 8-byte issue stamp, printable
/// (base64url, 54 characters); the store keeps only their key (the stamp, then the token's
/// SHA-256), never the token.
///
/// Why the stamp: the key is the refresh-token table's primary key and the token family
/// is indexed. A bare SHA-256 puts every new token on a random page of a large B-tree, and
/// each such page is a full page in the WAL at every commit. Keys that start with the
/// issue time land where the previous ones did, so a batch of sign-ups dirties a few pages
/// at the tree's right edge instead of one page per token. The stamp is only the issue
/// time (in ms) and two random bytes: it tells the token's holder nothing new, and the
/// 256 secret bits are untouched.
///
/// Tokens issued before the stamp (43 characters, 32 bytes) keep working: their key is
/// their SHA-256, as it was stored.
enum RefreshTokenFactory {
  static let stampBytes = 8
  static let secretBytes = 32
  /// The characters of a stamped token: base64url of 40 bytes, unpadded.
  static let stampedLength = 54

  static func make(nowMs: Int64) throws(RPCError) -> (token: String, hash: [UInt8]) {
    do {
      let random = try SecureRandom.bytes(2 + secretBytes)
      let token = Base64URL.encode(stamp(nowMs: nowMs, random[0], random[1]) + random[2...])
      return (token, hash(token))
    } catch {
      throw RPCError(.internalError, "random generator failed")
    }
  }

  /// The store's key for a presented token: a stamped token's stamp then its SHA-256;
  /// anything else (an older token, or junk) its SHA-256 alone. Keys of the two kinds
  /// differ in length, so they never collide.
  static func hash(_ token: String) -> [UInt8] {
    let digest = SHA256.hash(Array(token.utf8))
    guard token.utf8.count == stampedLength, let bytes = Base64URL.decode(token),
      bytes.count == stampBytes + secretBytes
    else { return digest }
    return Array(bytes.prefix(stampBytes)) + digest
  }

  /// A new family's id: its first key's first 16 bytes in lowercase hex, so that (for
  /// stamped keys) ids sort by time as the keys do. Base64url would not: its alphabet is
  /// not in ASCII order.
  static func familyID(forKey key: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(32)
    for byte in key.prefix(16) {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// Milliseconds since 1970, big-endian in six bytes (until the year 10889), then two
  /// random bytes so that tokens of the same millisecond do not share a stamp.
  static func stamp(nowMs: Int64, _ low: UInt8, _ lower: UInt8) -> [UInt8] {
    let ms = UInt64(clamping: nowMs)
    return (0..<6).map { UInt8(truncatingIfNeeded: ms >> (8 * (5 - $0))) } + [low, lower]
  }
}
