import AnonAuthCrypto
import AnonAuthWire

/// Refresh tokens: 256 bits from the CSPRNG, printable (base64url, 43 characters); the
/// store keeps only their SHA-256.
enum RefreshTokenFactory {
  static func make() throws(RPCError) -> (token: String, hash: [UInt8]) {
    do {
      let token = try SecureRandom.base64URL(byteCount: 32)
      return (token, hash(token))
    } catch {
      throw RPCError(.internalError, "random generator failed")
    }
  }

  static func hash(_ token: String) -> [UInt8] { SHA256.hash(Array(token.utf8)) }
}
