import AnonAuthCrypto
import AnonAuthService
import Foundation

/// Firebase Authentication as far as the session exchange sees it, played by the test:
/// a signing key with a self-signed certificate published under `kid` in Google's x509
/// map shape, and Firebase ID tokens with whatever claims a test wants.
struct FakeFirebase: Sendable {
  static let projectID = "fb-project"
  static let kid = "fb-kid-1"
  let key: RSASigningKey
  let certificatePEM: String

  init() throws {
    guard let key = LinkingTestKeys.rsa else { throw LinkingSetupError("test keys could not be made") }
    self.key = key
    certificatePEM = try X509Certificate.selfSigned(
      for: key, commonName: "securetoken.system.gserviceaccount.com",
      validFrom: Date(timeIntervalSince1970: 1_700_000_000), validFor: 86_400)
  }

  /// `{"<kid>": "<PEM>"}`, as Google publishes the securetoken certificates.
  var certsJSON: String { JSONValue.object([Self.kid: .string(certificatePEM)]).jsonText }

  /// The claims of a Firebase ID token for `uid`, valid at `now`, signed in `authAgo`
  /// seconds before.
  func claims(
    uid: String, now: Int64, provider: String = "anonymous", email: String? = nil, name: String? = nil,
    picture: String? = nil, project: String = FakeFirebase.projectID, authAgo: Int64 = 600
  ) -> [String: JSONValue] {
    var identities: [String: JSONValue] = [:]
    if let email { identities["email"] = .array([.string(email)]) }
    var claims: [String: JSONValue] = [
      "iss": .string("https://securetoken.google.com/" + project), "aud": .string(project),
      "sub": .string(uid), "user_id": .string(uid), "iat": .int(now - 60), "exp": .int(now + 3540),
      "auth_time": .int(now - authAgo),
      "firebase": ["identities": .object(identities), "sign_in_provider": .string(provider)],
    ]
    if provider == "anonymous" { claims["provider_id"] = "anonymous" }
    if let email {
      claims["email"] = .string(email)
      claims["email_verified"] = true
    }
    if let name { claims["name"] = .string(name) }
    if let picture { claims["picture"] = .string(picture) }
    return claims
  }

  /// Signs with the published key, or with another one under the same kid.
  func sign(_ claims: [String: JSONValue], kid: String = FakeFirebase.kid, forged: Bool = false) throws
    -> String
  {
    guard let signer = forged ? LinkingTestKeys.otherRSA : key else { throw LinkingSetupError("no key") }
    return try JWT.sign(claims: claims, key: signer, kid: kid)
  }

  func token(
    uid: String, now: Int64, provider: String = "anonymous", email: String? = nil, name: String? = nil,
    picture: String? = nil
  ) throws -> String {
    try sign(claims(uid: uid, now: now, provider: provider, email: email, name: name, picture: picture))
  }
}
