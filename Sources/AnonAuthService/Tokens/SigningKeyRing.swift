import AnonAuthCrypto

/// The keys the minter holds at one moment: the one that signs, and every key still
/// published (which includes it), with its JWK and certificate.
struct SigningKeyRing: Sendable {
  struct Published: Sendable {
    let kid: String
    let publicKey: RSAPublicKey
    let certificatePEM: String
  }

  let activeKID: String
  let active: RSASigningKey
  let published: [String: Published]

  /// `{"keys":[...]}`: the JSON Web Key Set of every published key, oldest first.
  func jwksJSON(order: [String]) -> String {
    let keys: [JSONValue] = order.compactMap { kid in
      published[kid].map { entry in .object(entry.publicKey.jwk(kid: kid).mapValues { .string($0) }) }
    }
    return JSONValue.object(["keys": .array(keys)]).jsonText
  }
}
