import COpenSSL

/// AES-256-GCM with a self-describing layout, for secrets at rest (signing keys under the
/// master key): `version 1 || 12-byte random nonce || ciphertext || 16-byte tag`.
///
/// The version byte lets a later format coexist with stored blobs; random 96-bit nonces
/// are safe for far more messages than a key store will ever seal under one key.
public enum AESGCM {
  static let version: UInt8 = 1
  static let keySize = 32
  static let nonceSize = 12
  static let tagSize = 16
  /// The smallest sealed box: an empty plaintext.
  static let overhead = 1 + nonceSize + tagSize

  /// Encrypts and authenticates `plaintext`, binding `associatedData` (for example a key
  /// id) so that a blob cannot be moved to another record.
  /// - Throws: `CryptoError` when the key is not 32 bytes or OpenSSL fails.
  public static func seal(
    _ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8] = []
  ) throws(CryptoError) -> [UInt8] {
    guard key.count == keySize else { throw CryptoError("AES-GCM", reason: "the key must be 32 bytes") }
    guard plaintext.count <= Int(Int32.max) - 64, associatedData.count <= Int(Int32.max) else {
      throw CryptoError("AES-GCM input too large")
    }
    let nonce = try SecureRandom.bytes(nonceSize)
    ERR_clear_error()
    guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError("EVP_CIPHER_CTX_new") }
    defer { EVP_CIPHER_CTX_free(ctx) }
    guard EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, key, nonce) == 1 else {
      throw CryptoError("EVP_EncryptInit_ex")
    }
    var length: Int32 = 0
    if !associatedData.isEmpty {
      guard EVP_EncryptUpdate(ctx, nil, &length, associatedData, Int32(associatedData.count)) == 1
      else { throw CryptoError("AES-GCM associated data") }
    }
    // GCM is a stream mode: the ciphertext is exactly as long as the plaintext.
    var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
    var written = 0
    if !plaintext.isEmpty {
      guard EVP_EncryptUpdate(ctx, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1
      else { throw CryptoError("EVP_EncryptUpdate") }
      written = Int(length)
    }
    let finished = ciphertext.withUnsafeMutableBufferPointer { buffer in
      EVP_EncryptFinal_ex(ctx, buffer.baseAddress.map { $0 + written }, &length)
    }
    guard finished == 1 else { throw CryptoError("EVP_EncryptFinal_ex") }
    written += Int(length)
    guard written == plaintext.count else { throw CryptoError("AES-GCM length") }
    var tag = [UInt8](repeating: 0, count: tagSize)
    guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), &tag) == 1 else {
      throw CryptoError("AES-GCM tag")
    }
    return [version] + nonce + ciphertext[..<written] + tag
  }

  /// Checks and decrypts a box made by `seal`.
  /// - Throws: `CryptoError` for a wrong key, wrong associated data, any changed, missing
  ///   or extra byte, or an unknown version; the caller learns nothing about which.
  public static func open(
    _ sealed: [UInt8], key: [UInt8], associatedData: [UInt8] = []
  ) throws(CryptoError) -> [UInt8] {
    guard key.count == keySize else { throw CryptoError("AES-GCM", reason: "the key must be 32 bytes") }
    guard sealed.count >= overhead, sealed[0] == version else {
      throw CryptoError("AES-GCM open", reason: "not a sealed box")
    }
    guard sealed.count <= Int(Int32.max), associatedData.count <= Int(Int32.max) else {
      throw CryptoError("AES-GCM input too large")
    }
    let nonce = Array(sealed[1..<(1 + nonceSize)])
    let ciphertext = Array(sealed[(1 + nonceSize)..<(sealed.count - tagSize)])
    var tag = Array(sealed[(sealed.count - tagSize)...])

    ERR_clear_error()
    guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError("EVP_CIPHER_CTX_new") }
    defer { EVP_CIPHER_CTX_free(ctx) }
    guard EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, key, nonce) == 1 else {
      throw CryptoError("EVP_DecryptInit_ex")
    }
    var length: Int32 = 0
    if !associatedData.isEmpty {
      guard EVP_DecryptUpdate(ctx, nil, &length, associatedData, Int32(associatedData.count)) == 1
      else { throw CryptoError("AES-GCM associated data") }
    }
    var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
    var written = 0
    if !ciphertext.isEmpty {
      guard EVP_DecryptUpdate(ctx, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1
      else { throw CryptoError("EVP_DecryptUpdate") }
      written = Int(length)
    }
    guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag) == 1 else {
      throw CryptoError("AES-GCM tag")
    }
    let finished = plaintext.withUnsafeMutableBufferPointer { buffer in
      EVP_DecryptFinal_ex(ctx, buffer.baseAddress.map { $0 + written }, &length)
    }
    // A failed tag check leaves nothing on OpenSSL's queue; say what it means.
    guard finished == 1 else { throw CryptoError("AES-GCM open", reason: "authentication failed") }
    written += Int(length)
    return Array(plaintext[..<written])
  }
}
