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
    var (ciphertext, written) = try start(
      ctx, encrypt: true, key: key, nonce: nonce, associatedData: associatedData, input: plaintext)
    guard finish(ctx, &ciphertext, &written) else { throw CryptoError("EVP_EncryptFinal_ex") }
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
    var (plaintext, written) = try start(
      ctx, encrypt: false, key: key, nonce: nonce, associatedData: associatedData, input: ciphertext)
    guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag) == 1 else {
      throw CryptoError("AES-GCM tag")
    }
    // A failed tag check leaves nothing on OpenSSL's queue; say what it means.
    guard finish(ctx, &plaintext, &written) else {
      throw CryptoError("AES-GCM open", reason: "authentication failed")
    }
    return Array(plaintext[..<written])
  }

  /// Starts one pass of `ctx` (`encrypt`: sealing, else opening; OpenSSL's `Cipher` calls
  /// are its `Encrypt` or `Decrypt` calls by that flag) with `key` and `nonce`, takes in
  /// the associated data and runs `input` through. Returns the output buffer and how much
  /// of it is written: GCM is a stream mode, so the output is as long as the input.
  private static func start(
    _ ctx: OpaquePointer, encrypt: Bool, key: [UInt8], nonce: [UInt8], associatedData: [UInt8], input: [UInt8]
  ) throws(CryptoError) -> (output: [UInt8], written: Int) {
    guard EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), nil, key, nonce, encrypt ? 1 : 0) == 1 else {
      throw CryptoError(encrypt ? "EVP_EncryptInit_ex" : "EVP_DecryptInit_ex")
    }
    var length: Int32 = 0
    if !associatedData.isEmpty {
      guard EVP_CipherUpdate(ctx, nil, &length, associatedData, Int32(associatedData.count)) == 1
      else { throw CryptoError("AES-GCM associated data") }
    }
    var output = [UInt8](repeating: 0, count: input.count + 16)
    var written = 0
    if !input.isEmpty {
      guard EVP_CipherUpdate(ctx, &output, &length, input, Int32(input.count)) == 1 else {
        throw CryptoError(encrypt ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate")
      }
      written = Int(length)
    }
    return (output, written)
  }

  /// The pass's last step (when opening, the tag check): what it adds goes after
  /// `written`. False when it fails.
  private static func finish(_ ctx: OpaquePointer, _ output: inout [UInt8], _ written: inout Int) -> Bool {
    var length: Int32 = 0
    let at = written
    let finished = output.withUnsafeMutableBufferPointer { buffer in
      EVP_CipherFinal_ex(ctx, buffer.baseAddress.map { $0 + at }, &length)
    }
    guard finished == 1 else { return false }
    written += Int(length)
    return true
  }
}
