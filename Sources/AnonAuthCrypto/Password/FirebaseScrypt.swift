import COpenSSL

/// Firebase Authentication's modified scrypt, so that users imported from a Firebase
/// project sign in with the passwords they have (`firebase auth:export` keeps only these
/// hashes). The project's hash parameters come from the Firebase console.
///
/// The hash of a password is: scrypt over the password with salt + salt separator
/// (N = 2^memCost, r = rounds, p = 1, 64 bytes), whose first 32 bytes are an AES-256 key
/// that encrypts the project's signer key in CTR mode with a zero IV. A sign-in that
/// passes is re-hashed with AnonAuth's own parameters.
public struct FirebaseScrypt: Sendable, Equatable {
  public let signerKey: [UInt8]
  public let saltSeparator: [UInt8]
  public let rounds: Int
  public let memCost: Int

  /// Bounds a hash config must keep: Firebase's own ranges (rounds 1...8, mem_cost
  /// 1...14), so an imported config cannot make one sign-in cost more than a gigabyte.
  public static let roundsRange = 1...8
  public static let memCostRange = 1...14

  /// - Throws: `CryptoError` for parameters outside Firebase's ranges or an empty key.
  public init(signerKey: [UInt8], saltSeparator: [UInt8], rounds: Int, memCost: Int) throws(CryptoError) {
    guard !signerKey.isEmpty, signerKey.count <= 1024, saltSeparator.count <= 1024 else {
      throw CryptoError("Firebase hash config: signer key or salt separator size")
    }
    guard Self.roundsRange.contains(rounds), Self.memCostRange.contains(memCost) else {
      throw CryptoError("Firebase hash config: rounds must be 1...8 and mem_cost 1...14")
    }
    self.signerKey = signerKey
    self.saltSeparator = saltSeparator
    self.rounds = rounds
    self.memCost = memCost
  }

  /// The hash Firebase stores for `password` with the account's `salt`.
  /// - Throws: `CryptoError` when OpenSSL fails.
  public func hash(password: [UInt8], salt: [UInt8]) throws(CryptoError) -> [UInt8] {
    let derived = try Scrypt.derive(
      password: password, salt: salt + saltSeparator, n: UInt64(1) << UInt64(memCost), r: UInt64(rounds),
      p: 1,
      length: 64)
    return try Self.aes256CTR(key: Array(derived.prefix(32)), input: signerKey)
  }

  /// Whether `password` matches a hash imported from Firebase, compared in constant time.
  public func verify(password: [UInt8], salt: [UInt8], hash expected: [UInt8]) -> Bool {
    guard let actual = try? hash(password: password, salt: salt) else { return false }
    return ConstantTime.equals(actual, expected)
  }

  /// AES-256 in CTR mode with a zero IV (a stream cipher: output as long as the input).
  static func aes256CTR(key: [UInt8], input: [UInt8]) throws(CryptoError) -> [UInt8] {
    guard key.count == 32, input.count <= 1024 else { throw CryptoError("AES-256-CTR input") }
    ERR_clear_error()
    guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError("EVP_CIPHER_CTX_new") }
    defer { EVP_CIPHER_CTX_free(ctx) }
    let iv = [UInt8](repeating: 0, count: 16)
    guard EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nil, key, iv) == 1 else {
      throw CryptoError("EVP_EncryptInit_ex")
    }
    var output = [UInt8](repeating: 0, count: input.count + 16)
    var length: Int32 = 0
    guard EVP_EncryptUpdate(ctx, &output, &length, input, Int32(input.count)) == 1 else {
      throw CryptoError("EVP_EncryptUpdate")
    }
    var written = Int(length)
    let finished = output.withUnsafeMutableBufferPointer { buffer in
      EVP_EncryptFinal_ex(ctx, buffer.baseAddress.map { $0 + written }, &length)
    }
    guard finished == 1 else { throw CryptoError("EVP_EncryptFinal_ex") }
    written += Int(length)
    guard written == input.count else { throw CryptoError("AES-256-CTR length") }
    return Array(output.prefix(written))
  }
}
