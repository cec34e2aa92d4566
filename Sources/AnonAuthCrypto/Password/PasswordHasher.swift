/// Hashes and checks passwords with scrypt in PHC format. Every call is slow on purpose
/// (tens of milliseconds): run it on a pool of threads sized to the cores.
public struct PasswordHasher: Sendable {
  /// The parameters of new hashes; older hashes still verify and report `needsRehash`.
  public let parameters: ScryptParameters
  public static let saltLength = 16
  public static let hashLength = 32

  /// - Parameter parameters: the cost of new hashes (tests pass cheaper ones).
  public init(parameters: ScryptParameters = .current) {
    self.parameters = parameters
  }

  /// The outcome of checking a password against a stored hash.
  public struct Verification: Sendable, Equatable {
    public let matches: Bool
    /// The hash was made with weaker parameters than `parameters`: store a new one after
    /// a successful sign-in.
    public let needsRehash: Bool

    public init(matches: Bool, needsRehash: Bool) {
      self.matches = matches
      self.needsRehash = needsRehash
    }
  }

  /// A new PHC string for `password`, with a fresh 16-byte salt.
  /// - Throws: `CryptoError` if the random generator or scrypt fails.
  public func hash(_ password: String) throws(CryptoError) -> String {
    let salt = try SecureRandom.bytes(Self.saltLength)
    let key = try Scrypt.derive(
      password: Array(password.utf8), salt: salt, parameters: parameters, length: Self.hashLength)
    return PHCString(parameters: parameters, salt: salt, hash: key).text
  }

  /// Whether `password` matches `stored`, compared in constant time. A stored string that
  /// does not parse (or asks for absurd parameters) never matches.
  public func verify(_ password: String, against stored: String) -> Verification {
    guard let phc = try? PHCString(parsing: stored),
      let key = try? Scrypt.derive(
        password: Array(password.utf8), salt: phc.salt, parameters: phc.parameters, length: phc.hash.count)
    else { return Verification(matches: false, needsRehash: false) }
    let matches = ConstantTime.equals(key, phc.hash)
    return Verification(matches: matches, needsRehash: matches && needsRehash(phc))
  }

  /// Whether a hash should be made again with the current parameters.
  public func needsRehash(_ phc: PHCString) -> Bool {
    !phc.parameters.isAtLeast(parameters) || phc.salt.count < Self.saltLength
      || phc.hash.count < Self.hashLength
  }
}
