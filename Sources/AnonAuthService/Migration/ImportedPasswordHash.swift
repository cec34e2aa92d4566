import Foundation

/// How an imported password hash is kept in `accounts.password_hash` until its owner signs
/// in (then AnonAuth's own scrypt replaces it): `$import$<config id>$<salt>$<hash>`, salt
/// and hash in standard base64. The config id names the sealed row of
/// `password_hash_configs` holding the algorithm and the project's parameters, so the
/// secret signer key is stored once, sealed, and not in every row.
struct ImportedPasswordHash: Sendable, Equatable {
  static let prefix = "$import$"

  let configID: String
  let salt: [UInt8]
  let hash: [UInt8]

  init(configID: String, salt: [UInt8], hash: [UInt8]) {
    self.configID = configID
    self.salt = salt
    self.hash = hash
  }

  /// Parses the stored form; nil for anything else (AnonAuth's own PHC strings included).
  init?(stored: String) {
    guard stored.hasPrefix(Self.prefix), stored.utf8.count <= 4096 else { return nil }
    let parts = stored.dropFirst(Self.prefix.count).split(separator: "$", omittingEmptySubsequences: false)
    guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.count <= 64,
      let salt = Data(base64Encoded: String(parts[1])), let hash = Data(base64Encoded: String(parts[2])),
      !hash.isEmpty
    else { return nil }
    self.init(configID: String(parts[0]), salt: Array(salt), hash: Array(hash))
  }

  var stored: String {
    Self.prefix + configID + "$" + Data(salt).base64EncodedString() + "$" + Data(hash).base64EncodedString()
  }
}
