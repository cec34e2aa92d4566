import COpenSSL

/// Owns one `EVP_PKEY` and frees it with the last reference.
///
/// `@unchecked Sendable` is safe because nothing mutates the key after it is made: the
/// pointer is a `let`, only read-only operations (sign, verify, export) are run on it, and
/// OpenSSL 3 allows concurrent use of a key that is not modified, each thread with its
/// own `EVP_MD_CTX`/`EVP_PKEY_CTX` (openssl-threads(7)). Keys come from provider-native
/// paths (keygen, decoders, fromdata), never from the legacy `EVP_PKEY_assign_*` setters.
final class PKeyHandle: @unchecked Sendable {
  let pointer: OpaquePointer

  /// Takes ownership of `pointer`.
  init(_ pointer: OpaquePointer) { self.pointer = pointer }

  deinit { EVP_PKEY_free(pointer) }

  /// True when the key is of OpenSSL key type `name` ("RSA", "EC").
  func isA(_ name: String) -> Bool { EVP_PKEY_is_a(pointer, name) == 1 }

  /// The key's size in bits (modulus for RSA, group order for EC).
  var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

  /// A big-endian parameter such as RSA's "n" or "e", without leading zero bytes.
  func bigEndianParameter(_ name: String) throws(CryptoError) -> [UInt8] {
    ERR_clear_error()
    var bn: OpaquePointer?
    guard EVP_PKEY_get_bn_param(pointer, name, &bn) == 1, let bn else {
      throw CryptoError("EVP_PKEY_get_bn_param \(name)")
    }
    defer { BN_free(bn) }
    var out = [UInt8](repeating: 0, count: (Int(BN_num_bits(bn)) + 7) / 8)
    guard BN_bn2bin(bn, &out) == out.count else { throw CryptoError("BN_bn2bin") }
    return out
  }

  /// The SubjectPublicKeyInfo DER of the key.
  func publicKeyDER() throws(CryptoError) -> [UInt8] {
    ERR_clear_error()
    guard let der = encodedDER({ i2d_PUBKEY(pointer, $0) }) else { throw CryptoError("i2d_PUBKEY") }
    return der
  }

  /// A key read from SubjectPublicKeyInfo DER; all bytes must be used.
  static func fromPublicKeyDER(_ der: [UInt8]) throws(CryptoError) -> PKeyHandle {
    ERR_clear_error()
    let key = decodedWholeDER(der, { d2i_PUBKEY(nil, $0, $1) }, free: { EVP_PKEY_free($0) })
    guard let key else { throw CryptoError("d2i_PUBKEY") }
    return PKeyHandle(key)
  }

  /// Runs OpenSSL's public-key checks (RSA: modulus and exponent sanity; EC: the point is
  /// on the curve), so that hostile JWKs fail here instead of in every verification.
  func checkPublic() throws(CryptoError) {
    ERR_clear_error()
    guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else {
      throw CryptoError("EVP_PKEY_CTX_new_from_pkey")
    }
    defer { EVP_PKEY_CTX_free(ctx) }
    guard EVP_PKEY_public_check(ctx) == 1 else { throw CryptoError("public key check") }
  }
}
