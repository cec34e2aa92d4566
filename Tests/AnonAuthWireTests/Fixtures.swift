import AnonAuthWire
import Testing

/// A message to test with, named so that a failing argument is easy to spot.
struct Sample: Sendable, CustomTestStringConvertible {
  let name: String
  let message: any ProtoMessage

  init(_ name: String, _ message: any ProtoMessage) {
    self.name = name
    self.message = message
  }

  init(_ message: any ProtoMessage) {
    self.init(type(of: message).protoMessageName, message)
  }

  var testDescription: String { name }
}

/// One populated value of every message type in Protos/, plus extra values for oneof
/// cases and edge values. `RoundTripTests` checks that every type is here.
enum Fixtures {
  static let allByteValues: [UInt8] = Array(0...255)
  static let unicode = "Grüße, 世界! 🌍👩‍💻 ﷽ \u{202E}rtl\u{202C} e\u{301}"

  static let providerInfos = [
    ProviderInfo(providerId: "password", rawId: "ana@example.com", email: "ana@example.com"),
    ProviderInfo(
      providerId: "google.com", rawId: "1234567890", email: "ana@gmail.com",
      displayName: unicode),
    ProviderInfo(providerId: "oidc.corp", rawId: "sub-9", email: "", displayName: "Ana"),
  ]

  static let accountInfo = AccountInfo(
    localId: "a1B2c3D4e5F6g7H8i9J0k1L2m3N4", isAnonymous: true, email: "ana@example.com",
    emailVerified: true, displayName: unicode, disabled: true, createdAtMs: 1_700_000_000_123,
    lastSignInAtMs: Int64.max, lastRefreshAtMs: Int64.min, providers: providerInfos,
    validSince: 1_700_000_000, customClaimsJson: #"{"role":"admin","n":[1,2]}"#,
    scheduledDeletionAtMs: 1_702_592_000_000)

  static let credential = Credential(
    providerId: "google.com", email: "ana@example.com", password: "hunter2 🔑",
    idToken: "eyJhbGciOiJSUzI1NiJ9.e30.c2ln", accessToken: "EAAB...", nonce: "n-0S6_WzA2Mj",
    displayName: "Ada Lovelace")

  static let idpConfigs = [
    IdpConfig(
      providerId: "google.com", enabled: true, clientId: "client.apps.example",
      issuer: "https://accounts.google.com", jwksJson: #"{"keys":[]}"#,
      jwksUrl: "https://www.googleapis.com/oauth2/v3/certs", clientSecret: "s3cret",
      apiBaseUrl: "https://graph.facebook.com"),
    IdpConfig(providerId: "facebook.com", enabled: false, clientId: "1234"),
    IdpConfig(
      providerId: "apple.com", enabled: true, clientIds: ["com.example.app", "com.example.app.web"],
      teamId: "ABCDE12345", keyId: "XYZ9876543",
      privateKey: "-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n"),
  ]

  static let projectConfig = ProjectConfig(
    projectId: "demo-project", anonymousEnabled: true, emailPasswordEnabled: true,
    idps: idpConfigs, autoCleanupEnabled: true, autoCleanupEnabledAtMs: 1_700_000_000_000,
    signUpQuotaPerHour: UInt32.max, idTokenTtlSeconds: 3600, passwordMinLength: 6)

  static let status = Status(
    code: 8, message: "Too many sign-ups from this address", reason: "TOO_MANY_ATTEMPTS_TRY_LATER",
    details: ["retry_after_seconds": "3600", "provider_id": "anonymous", "": "empty key"])

  static let call = Call(
    id: UInt64.max, method: "/anonauth.v1.AccountService/SignUp",
    metadata: [
      "x-api-key": "AIzaSyExample", "x-request-id": "req-1", "x-end-user-ip": "203.0.113.9",
      "authorization": "Bearer admin", "x-unicode": unicode,
    ],
    timeoutMs: 30_000, payload: allByteValues)

  static let reply = Reply(
    id: 42, status: status, payload: [0x0a, 0x00, 0xff],
    metadata: ["x-request-id": "req-1", "b": "2", "a": "1"])

  static let importedAccount = ImportedAccount(
    localId: "firebase-uid-1", email: "ana@example.com", emailVerified: true, displayName: unicode,
    photoUrl: "https://example.com/a.png", disabled: true, createdAtMs: 1_700_000_000_000,
    lastSignInAtMs: Int64.max, customClaimsJson: "{\"admin\":true}", passwordHash: allByteValues,
    salt: [0xe3, 0x6c, 0x44], providers: [ImportedProvider(providerId: "facebook.com", rawId: "42")],
    anonauthPasswordHash: "$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaA")

  static let exportedAccount = ExportedAccount(
    account: accountInfo, photoUrl: "https://example.com/a.png", firebasePasswordHash: allByteValues,
    firebaseSalt: [1, 2, 3], anonauthPasswordHash: "$scrypt$ln=15,r=8,p=1$c2FsdA$aGFzaA",
    providerPhotoUrls: ["", "https://example.com/b.png"])

  static let populated: [Sample] = [
    // anonauth/rpc/v1/rpc.proto
    Sample("Frame.call", Frame(kind: .call(call))),
    Sample("Frame.reply", Frame(kind: .reply(reply))),
    Sample("Frame.ping", Frame(kind: .ping(Ping(nonce: 7)))),
    Sample("Frame.ping(empty)", Frame(kind: .ping(Ping()))),
    Sample("Frame.pong", Frame(kind: .pong(Pong(nonce: UInt64.max)))),
    Sample("Frame.goAway", Frame(kind: .goAway(GoAway(lastCallId: 9, reason: "SHUTTING_DOWN")))),
    Sample("Frame.unset", Frame()),
    Sample(call),
    Sample(reply),
    Sample("Reply.emptyStatus", Reply(id: 1, status: Status())),
    Sample(status),
    Sample("Status.negativeCode", Status(code: Int32.min, reason: "NEGATIVE")),
    Sample(Ping(nonce: 150)),
    Sample(Pong(nonce: 150)),
    Sample(GoAway(lastCallId: UInt64.max, reason: "MALFORMED_FRAME")),

    // anonauth/v1/account.proto
    Sample("SignUpRequest.anonymous", SignUpRequest(kind: .anonymous(AnonymousSignUp()))),
    Sample(
      "SignUpRequest.emailPassword",
      SignUpRequest(
        kind: .emailPassword(
          EmailPasswordSignUp(email: "ana@example.com", password: "pw", displayName: unicode)))),
    Sample("SignUpRequest.emptyEmailPassword", SignUpRequest(kind: .emailPassword(.init()))),
    Sample("SignUpRequest.unset", SignUpRequest()),
    Sample(AnonymousSignUp()),
    Sample(EmailPasswordSignUp(email: "ana@example.com", password: "pw", displayName: "Ana")),
    Sample(credential),
    Sample(SignInWithPasswordRequest(email: "ana@example.com", password: "correct horse")),
    Sample(SignInWithIdpRequest(credential: credential)),
    Sample(SignInWithFirebaseIdTokenRequest(idToken: "eyJ.firebase.id-token")),
    Sample(LinkWithCredentialRequest(idToken: "eyJ.id.token", credential: credential)),
    Sample(UnlinkProviderRequest(idToken: "eyJ.id.token", providerId: "google.com")),
    Sample(RefreshTokenRequest(refreshToken: "AMf-vBx_refresh_token_43_characters_long_abc")),
    Sample(GetAccountInfoRequest(idToken: "eyJ.id.token")),
    Sample(DeleteAccountRequest(idToken: "eyJ.id.token")),
    Sample(
      UpdateOwnAccountRequest(
        idToken: "eyJ.id.token", updateMask: ["display_name", "email", "password"], email: "ana@example.com",
        password: "pw", displayName: unicode)),
    Sample(DeleteAccountResponse()),
    Sample(
      RevokeTokenRequest(
        idToken: "eyJ.id.token", providerId: "apple.com", tokenType: 3, token: "c0ffee.0.rabc")),
    Sample(RevokeTokenResponse()),
    Sample(
      AuthResponse(
        localId: "uid", idToken: "eyJ.id.token", refreshToken: "refresh", expiresIn: 3600,
        isAnonymous: true, isNewUser: true, signInProvider: "anonymous", account: accountInfo)),
    Sample(accountInfo),
    Sample(providerInfos[1]),

    // anonauth/v1/admin.proto
    Sample(projectConfig),
    Sample(idpConfigs[0]),
    Sample(idpConfigs[2]),
    Sample(CreateProjectRequest(projectId: "demo-project")),
    Sample(GetProjectConfigRequest(projectId: "demo-project")),
    Sample(
      UpdateProjectConfigRequest(
        config: projectConfig,
        updateMask: ["anonymous_enabled", "idps", "sign_up_quota_per_hour", unicode])),
    Sample(CreateApiKeyRequest(projectId: "demo-project")),
    Sample(CreateApiKeyResponse(apiKey: "AIzaSyExample")),
    Sample(ListApiKeysRequest(projectId: "demo-project")),
    Sample(ListApiKeysResponse(apiKeys: ["AIza1", "AIza2", "AIza3"])),
    Sample(RevokeApiKeyRequest(projectId: "demo-project", apiKey: "AIza1")),
    Sample(RevokeApiKeyResponse()),
    Sample(
      ScheduleSignUpQuotaRequest(
        projectId: "demo-project", quota: 1000, startTimeMs: 1_700_000_000_000,
        durationSeconds: -1)),
    Sample(ScheduleSignUpQuotaResponse()),
    Sample(
      ListAccountsRequest(
        projectId: "demo-project", filter: .anonymous, pageSize: 100, pageToken: "next")),
    Sample(
      "ListAccountsRequest.unknownFilter",
      ListAccountsRequest(projectId: "p", filter: AccountFilter(rawValue: 77))),
    Sample(
      "ListAccountsRequest.negativeFilter",
      ListAccountsRequest(filter: AccountFilter(rawValue: -3))),
    Sample(
      ListAccountsResponse(
        accounts: [accountInfo, AccountInfo(), AccountInfo(localId: "second")],
        nextPageToken: "token", total: 3)),
    Sample(GetAccountRequest(projectId: "demo-project", localId: "uid")),
    Sample(DisableAccountRequest(projectId: "demo-project", localId: "uid", disabled: true)),
    Sample(DeleteAccountsRequest(projectId: "demo-project", localIds: ["u1", "u2", "", "u4"])),
    Sample(DeleteAccountsResponse(deleted: 1000)),
    Sample(RevokeRefreshTokensRequest(projectId: "demo-project", localId: "uid")),
    Sample(RevokeRefreshTokensResponse()),
    Sample(
      SetCustomClaimsRequest(
        projectId: "demo-project", localId: "uid", customClaimsJson: #"{"admin":true}"#)),
    Sample(PreviewCleanupRequest(projectId: "demo-project")),
    Sample(
      PreviewCleanupResponse(
        eligibleNow: 12, scheduledTotal: 345, scheduledNext30Days: 67,
        nextRunAtMs: 1_700_000_000_000)),
    Sample(RunCleanupRequest(projectId: "demo-project")),
    Sample(RunCleanupResponse(deleted: 12)),
    Sample(GetUsageRequest(projectId: "demo-project")),
    Sample(
      DailySignUps(
        day: "2024-01-31", byProvider: ["anonymous": 10, "password": 0, "google.com": .max])),
    Sample(
      GetUsageResponse(
        totalAccounts: 100, anonymousAccounts: 60, billableAccounts: 40, cleanedUpTotal: 5,
        signUpsByDay: [
          DailySignUps(day: "2024-01-30", byProvider: ["anonymous": 1]),
          DailySignUps(day: "2024-01-31", byProvider: ["anonymous": 2, "password": 3]),
          DailySignUps(),
        ])),
    Sample(RotateSigningKeyRequest()),
    Sample(RotateSigningKeyResponse(kid: "key-2024-01")),
    Sample(BackupRequest(name: "nightly.sqlite")),
    Sample(BackupResponse(path: "/var/lib/anonauth/backups/nightly.sqlite", bytes: 1 << 40)),
    Sample(
      PasswordHashConfig(
        algorithm: "SCRYPT", signerKey: allByteValues, saltSeparator: [0x07], rounds: 8, memCost: 14,
        saltFirst: true)),
    Sample(
      ImportedProvider(
        providerId: "google.com", rawId: "1234567890", email: "ana@example.com", displayName: unicode,
        photoUrl: "https://example.com/a.png")),
    Sample(importedAccount),
    Sample(
      ImportAccountsRequest(
        projectId: "demo-project", accounts: [importedAccount, ImportedAccount()],
        hashConfig: PasswordHashConfig(algorithm: "BCRYPT"), onConflict: .fail, dryRun: true,
        firstIndex: UInt64.max)),
    Sample(
      ImportRowError(index: 41, localId: "uid-41", reason: "EMAIL_EXISTS", message: "another account has it")),
    Sample(
      ImportAccountsResponse(
        imported: 998, skipped: 1, errors: [ImportRowError(index: 3, reason: "INVALID_UID")])),
    Sample(ExportAccountsRequest(projectId: "demo-project", pageSize: 1000, pageToken: "dWlk")),
    Sample(exportedAccount),
    Sample(ExportAccountsResponse(accounts: [exportedAccount, ExportedAccount()], nextPageToken: "dWlk")),
    Sample(DescribeClusterRequest()),
    Sample(
      ClusterNode(
        id: 1, address: "anonauth-0.anonauth-headless.default.svc.cluster.local:9001", role: "voter",
        leader: true)),
    Sample(
      DescribeClusterResponse(
        engine: "dqlite", nodeId: 2, leaderId: 1,
        nodes: [
          ClusterNode(id: 1, address: "10.0.0.1:9001", role: "voter", leader: true),
          ClusterNode(id: 4, role: "stand-by"),
        ])),
    Sample(RemoveClusterNodeRequest(id: UInt64.max)),
    Sample(
      CreateAccountRequest(
        projectId: "demo-project", localId: "uid-1", email: "ana@example.com", password: unicode,
        displayName: unicode, disabled: true, emailVerified: true, photoUrl: "https://example.com/a.png")),
    Sample(
      UpdateAccountRequest(
        projectId: "demo-project", localId: "uid-1",
        updateMask: ["email", "valid_since", "delete_providers"],
        email: "ana@example.com", password: "pw", displayName: unicode, photoUrl: "https://example.com/a.png",
        disabled: true, emailVerified: true, customClaimsJson: #"{"role":"admin"}"#, validSince: Int64.max,
        deleteProviders: ["password", "phone"])),
    Sample(
      LookupAccountsRequest(projectId: "demo-project", localIds: ["a", ""], emails: ["ana@example.com"])),
    Sample(
      LookupAccountsResponse(
        accounts: [accountInfo, AccountInfo()], photoUrls: ["https://example.com/a.png", ""])),
    Sample(
      GenerateActionLinkRequest(
        projectId: "demo-project",
        request: SendOobCodeRequest(requestType: "EMAIL_SIGNIN", email: "ana@example.com"))),

    // Email actions (anonauth/v1/account.proto)
    Sample(
      SendOobCodeRequest(
        requestType: "VERIFY_AND_CHANGE_EMAIL", email: "ana@example.com", idToken: "eyJ.id.token",
        newEmail: unicode,
        settings: ActionCodeSettings(
          continueUrl: "https://app.example.com/done?x=1", canHandleCodeInApp: true,
          iosBundleId: "com.example",
          androidPackageName: "com.example.android"),
        locale: "de-AT")),
    Sample(ActionCodeSettings(continueUrl: "http://localhost/", canHandleCodeInApp: true)),
    Sample(
      EmailTemplate(
        requestType: "PASSWORD_RESET", language: "de", subject: unicode, text: "%LINK%", html: "<a>%LINK%</a>"
      )),
    Sample(SendOobCodeResponse(email: "ana@example.com", oobLink: "https://x/?oobCode=c", oobCode: "c")),
    Sample(ResetPasswordRequest(oobCode: "code-1_x", newPassword: unicode)),
    Sample(
      ResetPasswordResponse(
        email: "ana@example.com", requestType: "VERIFY_AND_CHANGE_EMAIL", newEmail: "new@example.com")),
    Sample(ApplyActionCodeRequest(oobCode: "code-2")),
    Sample(SignInWithEmailLinkRequest(email: "ana@example.com", oobCode: "code-3", idToken: "eyJ.id.token")),

    // anonauth/v1/token.proto
    Sample(VerifyIdTokenRequest(idToken: "eyJ.id.token", checkRevoked: true)),
    Sample(
      VerifyIdTokenResponse(
        uid: "uid", projectId: "demo-project", isAnonymous: true, signInProvider: "anonymous",
        authTime: 1_700_000_000, issuedAt: 1_700_000_001, expiresAt: 1_700_003_601,
        claimsJson: #"{"sub":"uid"}"#)),
    Sample(GetPublicKeysRequest()),
    Sample(
      GetPublicKeysResponse(
        jwksJson: #"{"keys":[{"kty":"RSA","kid":"k1"}]}"#,
        x509Certificates: [
          "k1": "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n",
          "k2": "-----BEGIN CERTIFICATE-----\nMIIC...\n-----END CERTIFICATE-----\n",
          "k0": "",
        ],
        maxAgeSeconds: 21_600)),

    // anonauth/v1/health.proto
    Sample(CheckRequest()),
    Sample(CheckResponse(status: "SERVING")),
  ]

  /// The default value of every type that `populated` has.
  static let empty: [Sample] = {
    var seen: Set<String> = []
    var samples: [Sample] = []
    for sample in populated {
      let empty = emptyValue(like: sample.message)
      let name = type(of: empty).protoMessageName
      if seen.insert(name).inserted { samples.append(Sample("\(name)()", empty)) }
    }
    return samples
  }()

  private static func emptyValue<M: ProtoMessage>(like _: M) -> any ProtoMessage { M() }
}
