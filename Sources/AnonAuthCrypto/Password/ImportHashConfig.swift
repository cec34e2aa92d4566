/// How the password hashes of an import were made: the `hash_config` the Firebase
/// console shows (Authentication > Users > Password hash parameters), or one of the other
/// algorithms `firebase auth:import --hash-algo` takes that are cheap to check exactly.
///
/// Values are validated and normalized on the way in: settings the algorithm does not use
/// are dropped (as firebase-tools drops them), so two configs that hash alike are equal
/// and encode to the same bytes and `configID`.
public struct ImportHashConfig: Sendable, Equatable {
  /// The algorithms, named as `auth:import --hash-algo` and the console name them.
  public enum Algorithm: String, Sendable, CaseIterable {
    /// Firebase's modified scrypt: every hash `firebase auth:export` gives out.
    case scrypt = "SCRYPT"
    /// PBKDF2-HMAC-SHA256 of the password with the account's salt, `rounds` iterations.
    case pbkdf2SHA256 = "PBKDF2_SHA256"
    /// HMAC-SHA256 under `signerKey` of password + salt (or salt + password).
    case hmacSHA256 = "HMAC_SHA256"
    /// Self-contained `$2a$`/`$2b$`/`$2y$` hashes; the account's salt is not used.
    case bcrypt = "BCRYPT"
  }

  public let algorithm: Algorithm
  /// SCRYPT: the project's signer key. HMAC_SHA256: the HMAC key. Otherwise empty.
  public let signerKey: [UInt8]
  /// SCRYPT: appended to each account's salt. Otherwise empty.
  public let saltSeparator: [UInt8]
  /// SCRYPT: the block size r. PBKDF2_SHA256: iterations. Otherwise 0.
  public let rounds: Int
  /// SCRYPT: log2 of the cost N. Otherwise 0.
  public let memCost: Int
  /// HMAC_SHA256: the salt goes before the password (`--hash-input-order=SALT_FIRST`).
  /// Firebase's default is password first: firebase-admin-node's integration tests import
  /// HMAC(key, password + salt) with no order and sign in. Otherwise false.
  public let saltFirst: Bool

  /// SCRYPT bounds are Firebase's own (`FirebaseScrypt`).
  public static let scryptRoundsRange = FirebaseScrypt.roundsRange
  public static let scryptMemCostRange = FirebaseScrypt.memCostRange
  /// PBKDF2 iterations: firebase-tools accepts 0...120,000; 0 is no hash at all, and the
  /// ceiling is raised to a million so that hashes made to today's advice (600,000, OWASP
  /// 2023) still import, while one sign-in stays under a second of CPU.
  public static let pbkdf2RoundsRange = 1...1_000_000
  /// Keys and separators: Firebase's are 64 bytes and 1; a kilobyte is plenty, and bounds
  /// the work and the sealed size.
  public static let maxKeyBytes = 1024

  /// A config from its parts, validated.
  /// - Parameters:
  ///   - signerKey: required (non-empty) for SCRYPT and HMAC_SHA256.
  ///   - rounds: SCRYPT 1...8, PBKDF2_SHA256 1...1,000,000.
  ///   - memCost: SCRYPT 1...14.
  /// - Throws: `ImportHashConfigError` naming the setting at fault.
  public init(
    algorithm: Algorithm, signerKey: [UInt8] = [], saltSeparator: [UInt8] = [], rounds: Int = 0,
    memCost: Int = 0, saltFirst: Bool = false
  ) throws(ImportHashConfigError) {
    self.algorithm = algorithm
    switch algorithm {
    case .scrypt:
      try Self.requireKey(signerKey, for: algorithm)
      guard saltSeparator.count <= Self.maxKeyBytes else {
        throw ImportHashConfigError(
          .outOfRange, "the salt separator is longer than \(Self.maxKeyBytes) bytes")
      }
      try Self.require(rounds, in: Self.scryptRoundsRange, named: "rounds", for: algorithm)
      try Self.require(memCost, in: Self.scryptMemCostRange, named: "mem_cost", for: algorithm)
      (self.signerKey, self.saltSeparator, self.rounds, self.memCost, self.saltFirst) =
        (signerKey, saltSeparator, rounds, memCost, false)
    case .pbkdf2SHA256:
      try Self.require(rounds, in: Self.pbkdf2RoundsRange, named: "rounds", for: algorithm)
      (self.signerKey, self.saltSeparator, self.rounds, self.memCost, self.saltFirst) = (
        [], [], rounds, 0, false
      )
    case .hmacSHA256:
      try Self.requireKey(signerKey, for: algorithm)
      (self.signerKey, self.saltSeparator, self.rounds, self.memCost, self.saltFirst) =
        (signerKey, [], 0, 0, saltFirst)
    case .bcrypt:
      (self.signerKey, self.saltSeparator, self.rounds, self.memCost, self.saltFirst) = ([], [], 0, 0, false)
    }
  }

  private static func requireKey(_ key: [UInt8], for algorithm: Algorithm) throws(ImportHashConfigError) {
    guard !key.isEmpty else {
      throw ImportHashConfigError(.missing, "\(algorithm.rawValue) needs a key (base64_signer_key)")
    }
    guard key.count <= maxKeyBytes else {
      throw ImportHashConfigError(.outOfRange, "the key is longer than \(maxKeyBytes) bytes")
    }
  }

  private static func require(
    _ value: Int, in range: ClosedRange<Int>, named name: String, for algorithm: Algorithm
  ) throws(ImportHashConfigError) {
    guard range.contains(value) else {
      throw ImportHashConfigError(
        .outOfRange,
        "\(name) must be \(range.lowerBound)...\(range.upperBound) for \(algorithm.rawValue), not \(value)")
    }
  }
}
