/// A server-wide token signing key; the private key is sealed under the master key.
public struct SigningKeyRecord: Sendable, Equatable {
  public var kid: String
  public var privateKeySealed: [UInt8]
  public var certificatePEM: String
  public var createdAtMs: Int64
  /// 0 while the key signs (or is yet to); else when it stops or stopped signing.
  public var retiredAtMs: Int64 = 0
  /// When it starts signing; published from `createdAtMs`, so verifiers hold it before
  /// the first token it signs. 0: from its creation.
  public var signsFromMs: Int64 = 0
  /// A retired key stays published until its last token has expired.
  public var publishUntilMs: Int64 = 0

  public init(kid: String, privateKeySealed: [UInt8], certificatePEM: String, createdAtMs: Int64) {
    self.kid = kid
    self.privateKeySealed = privateKeySealed
    self.certificatePEM = certificatePEM
    self.createdAtMs = createdAtMs
  }
}

extension SigningKeyRecord {
  /// `signing_keys`, declared once.
  static let table = TableDefinition<SigningKeyRecord>(
    "signing_keys", key: ["kid"],
    blank: SigningKeyRecord(kid: "", privateKeySealed: [], certificatePEM: "", createdAtMs: 0),
    columns: [
      .text("kid", \.kid),
      .blob("private_key_sealed", \.privateKeySealed),
      .text("certificate_pem", \.certificatePEM),
      .integer("created_at_ms", \.createdAtMs),
      .integer("retired_at_ms", \.retiredAtMs),
      .integer("signs_from_ms", \.signsFromMs),
      .integer("publish_until_ms", \.publishUntilMs),
    ])
}
