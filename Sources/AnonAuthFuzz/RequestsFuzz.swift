import AnonAuthWire

/// The first byte picks the request type, the rest is its payload: every request a
/// client can send is decoded through protobuf-c, and a decoded one must encode again.
enum RequestsFuzz {
  static let decoders: [@Sendable ([UInt8]) -> Void] = [
    decode(SignUpRequest.self), decode(SignInWithPasswordRequest.self),
    decode(SignInWithIdpRequest.self), decode(LinkWithCredentialRequest.self),
    decode(UnlinkProviderRequest.self), decode(RefreshTokenRequest.self),
    decode(GetAccountInfoRequest.self), decode(DeleteAccountRequest.self),
    decode(SignInWithFirebaseIdTokenRequest.self), decode(ImportAccountsRequest.self),
    decode(ExportAccountsRequest.self),
    decode(CreateProjectRequest.self), decode(GetProjectConfigRequest.self),
    decode(UpdateProjectConfigRequest.self), decode(CreateApiKeyRequest.self),
    decode(ListApiKeysRequest.self), decode(RevokeApiKeyRequest.self),
    decode(ScheduleSignUpQuotaRequest.self), decode(ListAccountsRequest.self),
    decode(GetAccountRequest.self), decode(DisableAccountRequest.self),
    decode(DeleteAccountsRequest.self), decode(RevokeRefreshTokensRequest.self),
    decode(SetCustomClaimsRequest.self), decode(PreviewCleanupRequest.self),
    decode(RunCleanupRequest.self), decode(GetUsageRequest.self),
    decode(RotateSigningKeyRequest.self), decode(BackupRequest.self), decode(CheckRequest.self),
    decode(VerifyIdTokenRequest.self), decode(GetPublicKeysRequest.self),
  ]

  static func run(_ data: [UInt8]) {
    guard let first = data.first else { return }
    decoders[Int(first) % decoders.count](Array(data.dropFirst()))
  }

  private static func decode<M: ProtoMessage>(_ type: M.Type) -> @Sendable ([UInt8]) -> Void {
    { bytes in
      guard let message = try? M(serializedBytes: bytes) else { return }
      _ = message.serializedBytes()
    }
  }
}
