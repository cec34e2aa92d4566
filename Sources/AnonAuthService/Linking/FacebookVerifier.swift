import AnonAuthCrypto
import AnonAuthWire

/// Verifies a Facebook access token through the Graph API, as Facebook asks a server to:
///
/// 1. `GET {api}/debug_token?input_token=TOKEN&access_token=APP_ID|APP_SECRET`: the token
///    must be valid (`is_valid`), made for this app (`app_id` equals the config's
///    `client_id`) and not expired (`expires_at` in the future; 0 means it never expires).
/// 2. `GET {api}/me?fields=id,name,email&access_token=TOKEN&appsecret_proof=HMAC`: who the
///    user is. `appsecret_proof` (HMAC-SHA256 of the token under the app secret) proves
///    the call comes from the app's server.
///
/// The API base is the config's `api_base_url` (default https://graph.facebook.com), so
/// tests use a local HTTPS stub. Tokens and the secret appear only in the request URLs,
/// never in errors or logs. Every failure is `INVALID_IDP_RESPONSE`, except a call that
/// the provider's concurrency bound refuses (`TOO_MANY_ATTEMPTS_TRY_LATER`).
///
/// A token the Graph API refused is remembered for a minute (`rejections`, by hash), so
/// the same junk token sent again costs no outbound call.
struct FacebookVerifier {
  let config: IdpConfig
  let outbound: any OutboundHTTP
  var rejections: RejectedTokenCache? = nil

  /// A failure, and whether it is the Graph API's answer about the token (cacheable) or
  /// the API could not be asked.
  private struct Failure: Error {
    let error: RPCError
    let answered: Bool
  }

  /// Access tokens longer than this are refused before any call.
  static let maximumTokenBytes = 4096

  func verify(accessToken: String, nowSeconds now: Int64) async throws(RPCError) -> VerifiedIdentity {
    guard !config.clientSecret.isEmpty else {
      throw RPCError(.operationNotAllowed, "facebook.com is configured without client_secret")
    }
    guard !accessToken.isEmpty, accessToken.utf8.count <= Self.maximumTokenBytes else {
      throw invalid("the credential has no usable access_token")
    }
    let key = RejectedTokenCache.key([config.clientId, config.apiBaseUrl, accessToken])
    if let refused = rejections?.refusal(key, nowMs: now * 1000) { throw refused }
    do {
      return try await check(accessToken: accessToken, nowSeconds: now)
    } catch {
      if error.answered { rejections?.remember(key, error.error, nowMs: now * 1000) }
      throw error.error
    }
  }

  private func check(accessToken: String, nowSeconds now: Int64) async throws(Failure) -> VerifiedIdentity {
    let base = String(
      (config.apiBaseUrl.isEmpty ? ProviderSettings.facebookGraphURL : config.apiBaseUrl).reversed()
        .drop { $0 == "/" }.reversed())
    let token = URLQuery.escape(accessToken)
    let appToken = URLQuery.escape(config.clientId + "|" + config.clientSecret)

    let debug = try await fetchJSON(base + "/debug_token?input_token=\(token)&access_token=\(appToken)")
    guard let data = debug["data"]?.objectValue else { throw refusedBy("debug_token gave no data") }
    guard data["is_valid"]?.boolValue == true else { throw refusedBy("the access token is not valid") }
    let appID = data["app_id"]?.stringValue ?? data["app_id"]?.int64Value.map(String.init)
    guard appID == config.clientId else { throw refusedBy("the access token belongs to another app") }
    let expiresAt = data["expires_at"]?.int64Value ?? 0
    guard expiresAt == 0 || expiresAt > now else { throw refusedBy("the access token has expired") }
    let tokenUser = data["user_id"]?.stringValue ?? data["user_id"]?.int64Value.map(String.init)

    let proof = Hex.encode(
      HMACSHA256.authenticationCode(key: Array(config.clientSecret.utf8), message: Array(accessToken.utf8)))
    let me = try await fetchJSON(
      base + "/me?fields=id,name,email&access_token=\(token)&appsecret_proof=\(proof)")
    guard let id = me["id"]?.stringValue ?? me["id"]?.int64Value.map(String.init), !id.isEmpty,
      id.utf8.count <= 255
    else { throw refusedBy("/me gave no user id") }
    if let tokenUser, tokenUser != id { throw refusedBy("/me and debug_token disagree on the user") }
    let rawEmail = me["email"]?.stringValue ?? ""
    let name = me["name"]?.stringValue ?? ""
    // Refused at the door, so that every account made here survives export and import.
    guard ![id, rawEmail, name].contains(where: ProviderText.hasControl) else {
      throw refusedBy("/me gave text with control characters")
    }
    let email = EmailAddress.normalize(rawEmail) ?? ""
    // Facebook does not say whether it verified the address: counted as not verified.
    return VerifiedIdentity(
      providerID: ProviderSettings.facebook, rawID: id, email: email, emailVerified: false,
      displayName: ProviderText.clippedName(name))
  }

  private func fetchJSON(_ url: String) async throws(Failure) -> [String: JSONValue] {
    let response: OutboundResponse
    do {
      response = try await outbound.get(url)
    } catch let error as RPCError {
      throw Failure(error: error, answered: false)
    } catch {
      throw Failure(error: invalid("the Graph API could not be reached: \(error)"), answered: false)
    }
    guard response.status == 200 else {
      // A 4xx is the API's verdict on the token; 429 and 5xx say nothing about it.
      let verdict = (400..<500).contains(response.status) && response.status != 429
      throw Failure(error: invalid("the Graph API answered \(response.status)"), answered: verdict)
    }
    guard let object = JSONValue(jsonBytes: response.body)?.objectValue else {
      throw refusedBy("the Graph API answer is not a JSON object")
    }
    return object
  }

  private func invalid(_ why: String) -> RPCError { RPCError(.invalidIdpResponse, why) }
  private func refusedBy(_ why: String) -> Failure { Failure(error: invalid(why), answered: true) }
}

/// Percent-encoding of query values: everything but RFC 3986's unreserved characters.
enum URLQuery {
  static func escape(_ value: String) -> String {
    var out = ""
    for byte in value.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        out += "%" + Hex.encode([byte]).uppercased()
      }
    }
    return out
  }
}
