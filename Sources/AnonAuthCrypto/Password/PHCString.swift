/// A scrypt hash in PHC string format, `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`, so the
/// parameters travel with the hash and can be raised later without breaking old ones.
public struct PHCString: Sendable, Equatable {
  public let parameters: ScryptParameters
  public let salt: [UInt8]
  public let hash: [UInt8]

  /// Salts of 8 to 64 bytes and hashes of 16 to 64 bytes are accepted from storage.
  static let saltRange = 8...64
  static let hashRange = 16...64
  /// Longer text is refused before it is parsed.
  static let maximumLength = 256

  /// A hash to format with `text`.
  public init(parameters: ScryptParameters, salt: [UInt8], hash: [UInt8]) {
    self.parameters = parameters
    self.salt = salt
    self.hash = hash
  }

  /// Parses a stored hash. The parameters may come in any order, each exactly once.
  /// - Throws: `CryptoError` for anything that is not a well-formed scrypt PHC string
  ///   with bounded parameters.
  public init(parsing text: String) throws(CryptoError) {
    guard text.utf8.count <= Self.maximumLength else { throw CryptoError("PHC string too long") }
    let parts = text.split(separator: "$", omittingEmptySubsequences: false)
    guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else {
      throw CryptoError("not a scrypt PHC string")
    }
    var values: [Substring: Int] = [:]
    for field in parts[2].split(separator: ",", omittingEmptySubsequences: false) {
      let pair = field.split(separator: "=", omittingEmptySubsequences: false)
      guard pair.count == 2, ["ln", "r", "p"].contains(pair[0]), values[pair[0]] == nil,
        (1...4).contains(pair[1].count), pair[1].allSatisfy({ $0.isASCII && $0.isNumber }),
        !(pair[1].count > 1 && pair[1].hasPrefix("0")), let value = Int(pair[1])
      else { throw CryptoError("PHC scrypt parameters") }
      values[pair[0]] = value
    }
    guard let ln = values["ln"], let r = values["r"], let p = values["p"] else {
      throw CryptoError("PHC scrypt parameters")
    }
    let parameters = try ScryptParameters(ln: ln, r: r, p: p)
    guard let salt = PHCBase64.decode(parts[3]), Self.saltRange.contains(salt.count),
      let hash = PHCBase64.decode(parts[4]), Self.hashRange.contains(hash.count)
    else { throw CryptoError("PHC salt or hash") }
    self.init(parameters: parameters, salt: salt, hash: hash)
  }

  /// The canonical text: parameters in the order ln, r, p.
  public var text: String {
    "$scrypt$\(parameters)$\(PHCBase64.encode(salt))$\(PHCBase64.encode(hash))"
  }
}
