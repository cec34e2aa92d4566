/// Compact JWS (RFC 7515) for ID tokens: signing ours and splitting anyone's.
public enum JWT {
  /// Tokens longer than this are refused before any parsing: ours are about 1 KiB, custom
  /// claims are capped at 1000 bytes, and third-party ID tokens are far below it.
  public static let maximumLength = 16 * 1024

  /// An RS256 token with the header `{"alg":"RS256","kid":"<kid>","typ":"JWT"}` and
  /// `claims` encoded as compact JSON with sorted keys.
  /// - Throws: `CryptoError` if signing fails.
  public static func sign(
    claims: [String: JSONValue], key: RSASigningKey, kid: String
  ) throws(CryptoError) -> String {
    let input = signingInput(algorithm: "RS256", kid: kid, claims: claims)
    return input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
  }

  /// An ES256 token (header `{"alg":"ES256","kid":"<kid>","typ":"JWT"}`), for tests that
  /// play an OIDC issuer.
  /// - Throws: `CryptoError` if signing fails.
  public static func sign(
    claims: [String: JSONValue], key: ECP256SigningKey, kid: String
  ) throws(CryptoError) -> String {
    let input = signingInput(algorithm: "ES256", kid: kid, claims: claims)
    return input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
  }

  static func signingInput(algorithm: String, kid: String, claims: [String: JSONValue]) -> String {
    // Sorted keys put the header in the order alg, kid, typ.
    let header: JSONValue = .object(["alg": .string(algorithm), "kid": .string(kid), "typ": "JWT"])
    return Base64URL.encode(header.jsonBytes) + "." + Base64URL.encode(JSONValue.object(claims).jsonBytes)
  }

  /// Splits and parses a compact JWS without trusting it.
  /// - Throws: `JWTError` for an oversize token, not three parts, non-canonical base64url,
  ///   a header or claims that are not JSON objects, and a missing or `none` algorithm.
  public static func decode(_ token: String) throws(JWTError) -> DecodedJWT {
    let bytes = Array(token.utf8)
    guard bytes.count <= maximumLength else { throw .tooLarge }
    let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard parts.count == 3 else { throw .notThreeParts }

    guard let headerBytes = Base64URL.decodeCanonical(parts[0]) else { throw .badBase64URL(.header) }
    guard let claimBytes = Base64URL.decodeCanonical(parts[1]) else { throw .badBase64URL(.claims) }
    guard let signature = Base64URL.decodeCanonical(parts[2]) else { throw .badBase64URL(.signature) }

    let header = try object(headerBytes, part: .header)
    let claims = try object(claimBytes, part: .claims)
    guard let algorithm = header["alg"]?.stringValue else { throw .missingAlgorithm }
    guard algorithm.lowercased() != "none" else { throw .unsignedToken }

    return DecodedJWT(
      header: header, claims: claims, claimsJSON: claimBytes,
      signingInput: Array(bytes[..<(parts[0].count + 1 + parts[1].count)]), signature: signature)
  }

  private static func object(_ bytes: [UInt8], part: JWTPart) throws(JWTError) -> [String: JSONValue] {
    guard let value = JSONValue(jsonBytes: bytes) else { throw .notJSON(part) }
    guard let members = value.objectValue else { throw .notAnObject(part) }
    return members
  }
}
