/// A refresh token as stored: its SHA-256, never the token.
public struct RefreshTokenRecord: Sendable, Equatable {
  public var tokenHash: [UInt8]
  public var projectID: String
  public var localID: String
  /// Every token rotated from one sign-in shares the family; reuse revokes it whole.
  public var familyID: String
  public var issuedAtMs: Int64
  /// Seconds of the sign-in that started the family: refresh keeps it.
  public var authTime: Int64
  public var signInProvider: String
  /// 0 while this is the family's live token.
  public var rotatedAtMs: Int64 = 0
  /// The successor token, sealed under the master key, for the reuse grace window.
  public var successorSealed: [UInt8]?
  public var revoked = false

  public init(
    tokenHash: [UInt8], projectID: String, localID: String, familyID: String, issuedAtMs: Int64,
    authTime: Int64, signInProvider: String
  ) {
    self.tokenHash = tokenHash
    self.projectID = projectID
    self.localID = localID
    self.familyID = familyID
    self.issuedAtMs = issuedAtMs
    self.authTime = authTime
    self.signInProvider = signInProvider
  }
}
