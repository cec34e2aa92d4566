import AnonAuthCrypto

/// The keys the minter holds at one moment: those that sign now or are to sign (a key
/// rotated in is published ahead of signing), and every key still published, with its
/// JWK and certificate.
struct SigningKeyRing: Sendable {
  struct Published: Sendable {
    let kid: String
    let publicKey: RSAPublicKey
    let certificatePEM: String
  }

  /// A key with its private half and the time it signs in: from `fromMs` (0: ever since
  /// it was made) until `untilMs` (0: until a rotation retires it).
  struct Signer: Sendable {
    let kid: String
    let key: RSASigningKey
    let fromMs: Int64
    let untilMs: Int64
  }

  /// Oldest first, as the store lists them.
  let signers: [Signer]
  let published: [String: Published]

  /// The key that signs at `nowMs`: the newest whose time has come and not ended. Should
  /// the clock stand before every key's start (it was set back), the newest that has not
  /// been retired, so that tokens are still signed.
  func signer(atMs nowMs: Int64) -> Signer? {
    signers.last { $0.fromMs <= nowMs && ($0.untilMs == 0 || nowMs < $0.untilMs) }
      ?? signers.last { $0.untilMs == 0 }
  }

  /// `{"keys":[...]}`: the JSON Web Key Set of every published key, oldest first.
  func jwksJSON(order: [String]) -> String {
    let keys: [JSONValue] = order.compactMap { kid in
      published[kid].map { entry in .object(entry.publicKey.jwk(kid: kid).mapValues { .string($0) }) }
    }
    return JSONValue.object(["keys": .array(keys)]).jsonText
  }
}
