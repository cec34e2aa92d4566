import AnonAuthCrypto
import AnonAuthWire

/// Revokes a Sign in with Apple user's tokens, as Apple asks of apps that delete an
/// account (Firebase's `accounts:revokeToken`): the authorization code the app got from
/// Apple is exchanged at `{api_base_url}/auth/token` for the user's tokens, and the
/// refresh token (else the access token) is revoked at `{api_base_url}/auth/revoke`.
/// Both calls authenticate with a client secret the server signs itself: an ES256 JWT
/// from the project's Sign in with Apple key (`kid` the key id; `iss` the team id, `sub`
/// the client id, `aud` `https://appleid.apple.com`, 5 minutes of life).
///
/// Each call has the outbound client's deadline (5 s); a call that got no answer, or a
/// 5xx or 429, is tried again after 250 ms and 500 ms (three tries in all). Apple's own
/// refusals (400) are not retried: a code refused for one client id is tried with the
/// project's next one (a code is issued to the bundle id or the Services ID that asked).
struct AppleRevocation {
  let config: IdpConfig
  let outbound: any OutboundHTTP
  /// Waits between tries, in milliseconds (tests pass zeros).
  var backoffMs: [UInt64] = [250, 500]

  /// The audience Apple requires of a client secret, whatever base URL is configured.
  static let audience = "https://appleid.apple.com"
  static let secretLifetimeSeconds: Int64 = 300

  /// What happened, for the log line.
  struct Outcome: Sendable {
    let clientID: String
    let attempts: Int
  }

  /// - Throws: `OPERATION_NOT_ALLOWED` without a team id, key id and key;
  ///   `INVALID_IDP_RESPONSE` when Apple refuses the code or cannot be reached.
  func revoke(authorizationCode code: String, nowSeconds now: Int64, _ admitted: Admitted)
    async throws(RPCError) -> Outcome
  {
    guard !config.teamId.isEmpty, !config.keyId.isEmpty, !config.privateKey.isEmpty else {
      throw RPCError(
        .operationNotAllowed, "apple.com has no team_id, key_id and private_key for token revocation")
    }
    let key: ECP256SigningKey
    do {
      key = try ECP256SigningKey(pkcs8PEM: config.privateKey)
    } catch {
      throw RPCError(.operationNotAllowed, "apple.com's private_key cannot be used")
    }
    let base = config.apiBaseUrl.isEmpty ? ProviderSettings.appleAPIBaseURL : config.apiBaseUrl
    let clientIDs = ([config.clientId] + config.clientIds).filter { !$0.isEmpty }
    var attempts = 0
    var refusal = RPCError(.invalidIdpResponse, "apple.com has no client id")
    for clientID in clientIDs {
      let secret = try await admitted.run(.signing) { () async throws(RPCError) -> String in
        try clientSecret(key: key, clientID: clientID, now: now)
      }
      let exchanged = try await call(
        base + "/auth/token",
        [
          ("client_id", clientID), ("client_secret", secret), ("code", code),
          ("grant_type", "authorization_code"),
        ],
        attempts: &attempts)
      guard exchanged.status == 200 else {
        // A code for another of the app's client ids: try the next one.
        refusal = RPCError(
          .invalidIdpResponse, "Apple refused the authorization code (\(Self.appleError(exchanged)))")
        continue
      }
      let tokens = JSONValue(jsonBytes: exchanged.body)?.objectValue
      var token = tokens?["refresh_token"]?.stringValue ?? ""
      var hint = "refresh_token"
      if token.isEmpty {
        token = tokens?["access_token"]?.stringValue ?? ""
        hint = "access_token"
      }
      guard !token.isEmpty else {
        throw RPCError(.invalidIdpResponse, "Apple's token endpoint answered no token")
      }
      let revoked = try await call(
        base + "/auth/revoke",
        [("client_id", clientID), ("client_secret", secret), ("token", token), ("token_type_hint", hint)],
        attempts: &attempts)
      guard revoked.status == 200 else {
        throw RPCError(.invalidIdpResponse, "Apple refused the revocation (\(Self.appleError(revoked)))")
      }
      return Outcome(clientID: clientID, attempts: attempts)
    }
    throw refusal
  }

  /// The ES256 client secret for `clientID`.
  func clientSecret(key: ECP256SigningKey, clientID: String, now: Int64) throws(RPCError) -> String {
    let claims: [String: JSONValue] = [
      "iss": .string(config.teamId), "iat": .int(now), "exp": .int(now + Self.secretLifetimeSeconds),
      "aud": .string(Self.audience), "sub": .string(clientID),
    ]
    do {
      return try JWT.sign(claims: claims, key: key, kid: config.keyId)
    } catch {
      throw RPCError(.internalError, "signing the client secret failed")
    }
  }

  /// One POST, tried again (after `backoffMs`) when no answer came or Apple answered 5xx
  /// or 429.
  private func call(_ url: String, _ form: [(String, String)], attempts: inout Int) async throws(RPCError)
    -> OutboundResponse
  {
    var last = RPCError(.invalidIdpResponse, "Apple could not be reached")
    for tryIndex in 0...backoffMs.count {
      if tryIndex > 0 { try? await Task.sleep(for: .milliseconds(backoffMs[tryIndex - 1])) }
      attempts += 1
      do {
        let response = try await outbound.post(url, form: form)
        if response.status >= 500 || response.status == 429 {
          last = RPCError(.invalidIdpResponse, "Apple answered \(response.status)")
          continue
        }
        return response
      } catch let error as RPCError {
        throw error  // the provider's concurrency bound: not Apple's answer
      } catch {
        last = RPCError(.invalidIdpResponse, "Apple could not be reached: \(error)")
      }
      if Task.isCancelled { break }
    }
    throw last
  }

  /// Apple's `error` field (`invalid_grant`, `invalid_client`...), or the status.
  static func appleError(_ response: OutboundResponse) -> String {
    let error = JSONValue(jsonBytes: response.body)?.objectValue?["error"]?.stringValue ?? ""
    let safe = error.prefix(64).allSatisfy { $0.isASCII && ($0.isLetter || $0 == "_") } && !error.isEmpty
    return safe ? String(error.prefix(64)) : "status \(response.status)"
  }
}
