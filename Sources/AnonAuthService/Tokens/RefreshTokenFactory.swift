import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// Refresh tokens: the token family's id (16 bytes) then 256 bits from the CSPRNG,
/// printable (base64url, 64 characters); the store keeps only their key (the family id,
/// then the token's SHA-256), never the token.
///
/// Why the family id: the store keeps one row per family (migration 8), found by its id,
/// so a refresh rewrites that row instead of adding one, and a token of an older
/// generation still names the family it must revoke. The id starts with the family's
/// start time in ms and two random bytes (the stamp), then eight more random bytes:
/// new families land at the right edge of the table's key instead of on a random page,
/// and a batch of sign-ups dirties a few pages instead of one a session. The id tells
/// the token's holder nothing new, and the 256 secret bits are untouched.
///
/// Tokens of the older forms keep working: 54 characters (a stamp and 256 bits, keyed
/// by the stamp then the SHA-256) and 43 characters (keyed by the SHA-256), found by the
/// key their session was carried over with.
enum RefreshTokenFactory {
  static let stampBytes = 8
  static let secretBytes = 32
  static let familyIDBytes = RefreshTokensRepository.familyIDBytes
  /// The characters of a token: base64url of 48 bytes.
  static let tokenLength = 64
  /// The characters of a stamped token of the older form: base64url of 40 bytes, unpadded.
  static let stampedLength = 54

  /// The first token of a new family.
  static func make(nowMs: Int64) throws(RPCError) -> (token: String, hash: [UInt8]) {
    let random = try randomBytes(2 + (familyIDBytes - stampBytes))
    return try make(familyID: stamp(nowMs: nowMs, random[0], random[1]) + random[2...])
  }

  /// A family's next token (a rotation).
  static func make(familyID: [UInt8]) throws(RPCError) -> (token: String, hash: [UInt8]) {
    let token = Base64URL.encode(familyID + (try randomBytes(secretBytes)))
    return (token, hash(token))
  }

  private static func randomBytes(_ count: Int) throws(RPCError) -> [UInt8] {
    do {
      return try SecureRandom.bytes(count)
    } catch {
      throw RPCError(.internalError, "random generator failed")
    }
  }

  /// The store's key for a presented token: a token's family id then its SHA-256; a
  /// stamped token of the older form its stamp then its SHA-256; anything else (the
  /// oldest form, or junk) its SHA-256 alone. Keys of the three kinds differ in length,
  /// so they never collide.
  static func hash(_ token: String) -> [UInt8] {
    let digest = SHA256.hash(Array(token.utf8))
    let length = token.utf8.count
    guard length == tokenLength || length == stampedLength, let bytes = Base64URL.decode(token) else {
      return digest
    }
    if length == tokenLength, bytes.count == familyIDBytes + secretBytes {
      return Array(bytes.prefix(familyIDBytes)) + digest
    }
    if length == stampedLength, bytes.count == stampBytes + secretBytes {
      return Array(bytes.prefix(stampBytes)) + digest
    }
    return digest
  }

  /// A family's id in lowercase hex (logs, metrics): its key's first 16 bytes, so that
  /// ids sort by time as the keys do. Base64url would not: its alphabet is not in ASCII
  /// order.
  static func familyID(forKey key: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(32)
    for byte in key.prefix(familyIDBytes) {
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
