import AnonAuthCrypto
import AnonAuthWire

/// Verifies an OpenID Connect ID token from google.com, apple.com or an `oidc.<name>`
/// provider: an RS256 or ES256 signature by one of the provider's keys, then the claims
/// OIDC Core section 3.1.3.7 asks a relying party to check, and the nonce rule
/// (`NonceRule`). A token that does not verify is `INVALID_IDP_RESPONSE` (the reason
/// travels in the message, for people), a nonce that does not match is
/// `MISSING_OR_INVALID_NONCE`; a provider configured without an issuer or keys is
/// `OPERATION_NOT_ALLOWED`.
struct OIDCVerifier {
  let config: IdpConfig
  let cache: JWKSCache

  enum KeySource: Equatable {
    case inline(String)
    case url(String)
  }

  /// Where the provider's keys come from: inline JSON first, then the URL, then (for
  /// google.com and apple.com) the provider's published keys.
  var keySource: KeySource? {
    if !config.jwksJson.isEmpty { return .inline(config.jwksJson) }
    if !config.jwksUrl.isEmpty { return .url(config.jwksUrl) }
    if config.providerId == ProviderSettings.google { return .url(ProviderSettings.googleKeysURL) }
    if config.providerId == ProviderSettings.apple { return .url(ProviderSettings.appleKeysURL) }
    return nil
  }

  /// The issuers accepted: the configured one, else Google's two spellings for
  /// google.com, Apple's for apple.com.
  var issuers: [String] {
    if !config.issuer.isEmpty { return [config.issuer] }
    switch config.providerId {
    case ProviderSettings.google: return ProviderSettings.googleIssuers
    case ProviderSettings.apple: return [ProviderSettings.appleIssuer]
    default: return []
    }
  }

  /// The audiences accepted: `client_id` and every `client_ids` entry (Apple: the app's
  /// bundle ids and Services IDs).
  var clientIDs: [String] {
    ([config.clientId] + config.clientIds).filter { !$0.isEmpty }
  }

  /// - Parameter nonce: the credential's raw nonce (empty: none), held to `NonceRule`.
  func verify(idToken: String, nonce: String, nowSeconds now: Int64) async throws(RPCError)
    -> VerifiedIdentity
  {
    guard let source = keySource, !issuers.isEmpty else {
      throw RPCError(.operationNotAllowed, "\(config.providerId) is configured without an issuer or keys")
    }
    guard !idToken.isEmpty else { throw invalid("the credential has no id_token") }
    let token: DecodedJWT
    do {
      token = try JWT.decode(idToken)
    } catch {
      throw invalid("the ID token is malformed")
    }
    let algorithm = token.algorithm
    guard algorithm == "RS256" || algorithm == "ES256" else {
      throw invalid("the ID token's algorithm \(algorithm.prefix(16)) is not RS256 or ES256")
    }
    // An empty kid names no key: treated as none.
    let kid = token.keyID.flatMap { $0.isEmpty ? nil : $0 }
    var keys = try await keySet(source, refresh: false).candidates(kid: kid, algorithm: algorithm)
    if keys.isEmpty, case .url = source {
      keys = try await keySet(source, refresh: true).candidates(kid: kid, algorithm: algorithm)
    }
    guard !keys.isEmpty else { throw invalid("no key of the provider matches the ID token's kid") }
    let signed = keys.contains { key in
      switch key {
      case .rsa(let rsa): token.verify(with: rsa)
      case .ec(let ec): token.verify(with: ec)
      }
    }
    guard signed else { throw invalid("the ID token's signature is not valid") }
    return try checkClaims(token.claims, nonce: nonce, now: now)
  }

  private func keySet(_ source: KeySource, refresh: Bool) async throws(RPCError) -> JWKSet {
    switch source {
    case .inline(let json): try cache.inline(json)
    case .url(let url): try await cache.keys(url: url, refresh: refresh)
    }
  }

  func checkClaims(_ claims: [String: JSONValue], nonce: String, now: Int64) throws(RPCError)
    -> VerifiedIdentity
  {
    guard let iss = claims["iss"]?.stringValue, issuers.contains(iss) else {
      throw invalid("the ID token's issuer is not \(config.providerId)'s")
    }
    let audiences: [String]
    if let single = claims["aud"]?.stringValue {
      audiences = [single]
    } else if let list = claims["aud"]?.arrayValue {
      audiences = list.compactMap(\.stringValue)
    } else {
      audiences = []
    }
    let ours = clientIDs
    guard audiences.contains(where: ours.contains) else {
      throw invalid("the ID token was issued for another client")
    }
    // With several audiences, the authorized party must be present and be us (OIDC Core
    // 3.1.3.7): otherwise a token another client obtained, naming us only among others,
    // would sign in here. With one audience (us) a different `azp` is accepted: that is
    // Google's cross-client form (an Android or iOS client asks for a token whose
    // audience is the server's client id; `azp` names the app's own client id), and the
    // audience alone already says the token was issued for us, as Google's and
    // Firebase's verifiers judge it.
    if audiences.count > 1 {
      guard let azp = claims["azp"]?.stringValue, ours.contains(azp) else {
        throw invalid("an ID token with several audiences needs azp equal to the client id")
      }
    }
    guard let exp = claims["exp"]?.int64Value, let iat = claims["iat"]?.int64Value else {
      throw invalid("the ID token lacks exp or iat")
    }
    guard exp > now - ClockSkew.providerTokenSeconds else { throw invalid("the ID token has expired") }
    guard iat <= now + ClockSkew.providerTokenSeconds else {
      throw invalid("the ID token was issued in the future")
    }
    if let nbfValue = claims["nbf"] {
      guard let nbf = nbfValue.int64Value, nbf <= now + ClockSkew.providerTokenSeconds else {
        throw invalid("the ID token is not valid yet")
      }
    }
    let usedNonce = try NonceRule(providerID: config.providerId).check(
      claim: claims["nonce"], rawNonce: nonce, expiresAt: exp, now: now)
    guard let sub = claims["sub"]?.stringValue, !sub.isEmpty, sub.utf8.count <= 255 else {
      throw invalid("the ID token has no subject")
    }
    // Refused at the door, so that every account made here survives export and import.
    for (name, value) in [
      ("sub", sub), ("email", claims["email"]?.stringValue), ("name", claims["name"]?.stringValue),
    ]
    where value.map(ProviderText.hasControl) == true {
      throw invalid("the ID token's \(name) has control characters")
    }
    let email = claims["email"]?.stringValue.flatMap(EmailAddress.normalize) ?? ""
    // A boolean, or the string "true" (older Google tokens, and Apple's, which says
    // `is_private_email` the same two ways: a private-relay address is a verified email
    // like any other).
    let verified: Bool
    switch claims["email_verified"] {
    case .bool(let flag): verified = flag
    case .string(let text): verified = text == "true"
    default: verified = false
    }
    let name = claims["name"]?.stringValue ?? ""
    return VerifiedIdentity(
      providerID: config.providerId, rawID: sub, email: email, emailVerified: !email.isEmpty && verified,
      displayName: ProviderText.clippedName(name), nonce: usedNonce)
  }

  private func invalid(_ why: String) -> RPCError { RPCError(.invalidIdpResponse, why) }
}
