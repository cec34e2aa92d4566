import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// `TokenService`: lets other services check ID tokens and fetch the public keys.
public struct TokenService: TokenServiceHandler {
  public static let name = TokenServiceMethods.serviceName
  let env: ServiceEnvironment

  public init(environment: ServiceEnvironment) {
    env = environment
  }

  public func authenticate(_ context: CallContext) throws(RPCError) {
    _ = try env.project(context)
  }

  /// Signature, project, expiry; with `check_revoked` also the account's `valid_since`,
  /// existence and disabled flag, as the Firebase Admin SDK's `verifyIdToken(checkRevoked)`.
  public func verifyIdToken(_ request: VerifyIdTokenRequest, context: CallContext) async throws(RPCError)
    -> VerifyIdTokenResponse
  {
    let project = try env.project(context)
    let (claims, claimsJSON) = try env.minter.verified(request.idToken, projectID: project.projectID)
    let provider = claims["firebase"]?["sign_in_provider"]?.stringValue ?? ""
    if let uid = claims["sub"]?.stringValue {
      context.log.setAccount(uid: uid, isAnonymous: provider == "anonymous")
    }
    if request.checkRevoked {
      _ = try await AccountService(environment: env).account(for: claims, project: project, log: context.log)
    }
    var response = VerifyIdTokenResponse()
    response.uid = claims["sub"]?.stringValue ?? ""
    response.projectId = project.projectID
    response.signInProvider = provider
    response.isAnonymous = provider == "anonymous"
    response.authTime = claims["auth_time"]?.int64Value ?? 0
    response.issuedAt = claims["iat"]?.int64Value ?? 0
    response.expiresAt = claims["exp"]?.int64Value ?? 0
    response.claimsJson = claimsJSON
    return response
  }

  public func getPublicKeys(_ request: GetPublicKeysRequest, context: CallContext) -> GetPublicKeysResponse {
    let keys = env.minter.publicKeys()
    var response = GetPublicKeysResponse()
    response.jwksJson = keys.jwks
    response.x509Certificates = keys.certificates
    response.maxAgeSeconds = keys.maxAge
    return response
  }
}
