/// A new session's first refresh token as the store receives it: its key, never the token.
public struct RefreshTokenRecord: Sendable, Equatable {
  /// The token's key: the family id (16 bytes) then the token's SHA-256 for tokens made
  /// since migration 8; any other length is a key of an older form, stored as it is
  /// (`RefreshTokensRepository.insert`).
  public var tokenHash: [UInt8]
  public var projectID: String
  public var localID: String
  /// The family's name in logs and metrics; the store takes the family from the key.
  public var familyID: String
  public var issuedAtMs: Int64
  /// Seconds of the sign-in that started the family: refresh keeps it.
  public var authTime: Int64
  public var signInProvider: String

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
