import Testing

@testable import AnonAuthWire

/// Every decode is pre-scanned: a maximum-size message of any hostile shape is refused
/// before protobuf-c allocates anything, and the largest legitimate messages still decode.
@Suite struct DecodeCostTests {
  static let maxFrame = 4 * 1024 * 1024

  static func repeated(_ unit: [UInt8], count: Int) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(unit.count * count)
    for _ in 0..<count { out += unit }
    return out
  }

  /// `unit` repeated to fill a 4 MiB frame (less room for the envelope).
  static func filling(_ unit: [UInt8]) -> [UInt8] { repeated(unit, count: (maxFrame - 64) / unit.count) }

  static func lengthDelimited(_ number: UInt64, _ body: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    ProtoVarint.append(number << 3 | 2, to: &out)
    ProtoVarint.append(UInt64(body.count), to: &out)
    return out + body
  }

  static func callFrame(payload: [UInt8]) -> [UInt8] {
    Frame(kind: .call(Call(id: 1, method: "/anonauth.v1.AdminService/ImportAccounts", payload: payload)))
      .serializedBytes()
  }

  /// Decodes as `M` with an allocator of the test's own: the refusal must come before
  /// protobuf-c allocates a single block.
  static func expectRefusedBeforeAllocating<M: ProtoCBridged>(
    _ bytes: [UInt8], as _: M.Type, verdict: ProtoPreScan.Verdict
  ) {
    var tally = ProtoPreScan.Tally()
    #expect(M.preScan(bytes, tally: &tally) == verdict)
    let allocations = ProtoUnpackAllocations()
    #expect(throws: ProtoDecodingError.malformed) {
      try ProtoBridge.decode(bytes, as: M.self, allocations: allocations)
    }
    #expect(allocations.count == 0)
  }

  // MARK: Hostile shapes

  /// The issue's frame: two million `78 00` (field 15, varint 0), unknown to `Frame`.
  @Test func frameOfTwoByteUnknownFieldsIsRefused() {
    let bytes = Self.repeated([0x78, 0x00], count: Self.maxFrame / 2)
    Self.expectRefusedBeforeAllocating(bytes, as: Frame.self, verdict: .tooManyUnknownFields)
  }

  /// The same inside a call's payload: the frame decodes, the payload does not.
  @Test func payloadOfTwoByteUnknownFieldsIsRefused() throws {
    let payload = Self.filling([0x78, 0x00])
    let frame = try Frame(serializedBytes: Self.callFrame(payload: payload))
    guard case .call(let call)? = frame.kind else {
      Issue.record("not a call")
      return
    }
    Self.expectRefusedBeforeAllocating(call.payload, as: SignUpRequest.self, verdict: .tooManyUnknownFields)
  }

  /// Unknown fields at every depth count together.
  @Test func unknownFieldsOfNestedMessagesCount() {
    let account = Self.lengthDelimited(2, [0x78, 0x00])  // an ImportedAccount with one unknown
    let bytes = Self.repeated(account, count: CallLimits.maxUnknownFields + 1)
    Self.expectRefusedBeforeAllocating(bytes, as: ImportAccountsRequest.self, verdict: .tooManyUnknownFields)
  }

  @Test func unknownFieldsUpToTheLimitDecode() throws {
    let bytes = Self.repeated([0x78, 0x00], count: CallLimits.maxUnknownFields)
    #expect(try SignUpRequest(serializedBytes: bytes).unknownFields.count == CallLimits.maxUnknownFields)
  }

  /// Two million empty strings in a known repeated field (`DeleteAccounts.local_ids`).
  @Test func tinyKnownRepeatedFieldsAreRefused() {
    Self.expectRefusedBeforeAllocating(
      Self.filling([0x12, 0x00]), as: DeleteAccountsRequest.self, verdict: .tooManyFields)
  }

  /// Empty map entries, in the status of a reply (what a client decodes).
  @Test func manyMapEntriesAreRefused() {
    let status = Self.filling([0x22, 0x00])
    let bytes = Self.lengthDelimited(2, Self.lengthDelimited(2, status))
    Self.expectRefusedBeforeAllocating(bytes, as: Frame.self, verdict: .tooManyFields)
  }

  /// Empty nested messages: each costs protobuf-c a struct with a slot per field.
  @Test func manyEmptyNestedMessagesAreRefused() {
    Self.expectRefusedBeforeAllocating(
      Self.filling([0x12, 0x00]), as: ImportAccountsRequest.self, verdict: .tooManyFields)
    // Accounts that each hold an empty provider: two levels of known messages.
    Self.expectRefusedBeforeAllocating(
      Self.filling([0x12, 0x02, 0x62, 0x00]), as: ImportAccountsRequest.self, verdict: .tooManyFields)
  }

  /// A singular message field given again and again would make protobuf-c merge (and
  /// copy) the repeated fields of every earlier one.
  @Test func aRepeatedSingularMessageIsRefused() {
    let config = Self.lengthDelimited(1, Self.lengthDelimited(4, []))  // config { idps {} }
    Self.expectRefusedBeforeAllocating(
      config + config, as: UpdateProjectConfigRequest.self, verdict: .repeatedSingularMessage)
    // Once is fine, and so are two different members of a oneof.
    #expect((try? UpdateProjectConfigRequest(serializedBytes: config)) != nil)
    #expect((try? Frame(serializedBytes: [0x1a, 0x00, 0x22, 0x00])) != nil)
  }

  /// Requests without repeated fields (everything an API key can send) get the small
  /// bound: the same string field given thousands of times is refused.
  @Test func fixedShapeMessagesHaveTheSmallBound() throws {
    #expect(!SignUpRequest.protoScanSchema.mayRepeat)
    #expect(!RefreshTokenRequest.protoScanSchema.mayRepeat)
    #expect(ImportAccountsRequest.protoScanSchema.mayRepeat)
    #expect(UpdateProjectConfigRequest.protoScanSchema.mayRepeat)
    #expect(DeleteAccountsRequest.protoScanSchema.mayRepeat)
    #expect(GetPublicKeysResponse.protoScanSchema.mayRepeat)
    // SignUp { email_password { email: "" x n } }: each costs 2.
    func signUp(emails: Int) -> [UInt8] {
      Self.lengthDelimited(2, Self.repeated([0x0a, 0x00], count: emails))
    }
    Self.expectRefusedBeforeAllocating(
      signUp(emails: CallLimits.maxFixedShapeDecodeCost), as: SignUpRequest.self, verdict: .tooManyFields)
    let fits =
      (CallLimits.maxFixedShapeDecodeCost - 1 - EmailPasswordSignUp.protoScanSchema.occurrenceCost) / 2
    #expect((try? SignUpRequest(serializedBytes: signUp(emails: fits))) != nil)
  }

  /// A frame has its own small bound: the map entries of a reply's status stop there.
  @Test func framesHaveTheirOwnBound() {
    let entries = CallLimits.maxFrameDecodeCost / 3
    let bytes = Self.lengthDelimited(2, Self.lengthDelimited(2, Self.repeated([0x22, 0x00], count: entries)))
    Self.expectRefusedBeforeAllocating(bytes, as: Frame.self, verdict: .tooManyFields)
  }

  @Test func packedElementsCountOneEach() {
    let schema = ProtoScanSchema([1: .packed(width: 0), 2: .packed(width: 8)])
    var tally = ProtoPreScan.Tally()
    let varints = Self.lengthDelimited(1, [0x01, 0x96, 0x01, 0x00])  // 1, 150, 0
    let fixed = Self.lengthDelimited(2, [UInt8](repeating: 0, count: 16))
    #expect(ProtoPreScan.scan(varints + fixed, schema: schema, tally: &tally) == .withinLimits)
    #expect(tally.cost == 5)
    var over = ProtoPreScan.Tally()
    let huge = Self.lengthDelimited(1, [UInt8](repeating: 0, count: CallLimits.maxDecodeCost + 1))
    #expect(ProtoPreScan.scan(huge, schema: schema, tally: &over) == .tooManyFields)
  }

  // MARK: Legitimate large messages

  /// The largest import batch (1000 accounts, the service's limit), every field set and
  /// ten providers each, inside a frame with metadata: the frame and the payload decode.
  @Test func theLargestImportBatchDecodes() throws {
    var request = ImportAccountsRequest(projectId: "project", firstIndex: 5)
    request.hashConfig = PasswordHashConfig(
      algorithm: "SCRYPT", signerKey: [1, 2, 3], saltSeparator: [4], rounds: 8, memCost: 14)
    request.accounts = (0..<1000).map { index in
      var account = ImportedAccount(
        localId: "uid-\(index)", email: "user\(index)@example.com", emailVerified: true,
        displayName: "User \(index)", photoUrl: "https://example.com/\(index).png", disabled: true,
        createdAtMs: 1_700_000_000_000, lastSignInAtMs: 1_700_000_000_001, customClaimsJson: "{\"a\":1}",
        passwordHash: [UInt8](repeating: 7, count: 32), salt: [UInt8](repeating: 9, count: 16),
        anonauthPasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA")
      account.providers = (0..<10).map { provider in
        ImportedProvider(
          providerId: "p\(provider).example.com", rawId: "raw-\(index)-\(provider)",
          email: "user\(index)@example.com", displayName: "User \(index)",
          photoUrl: "https://example.com/\(index)/\(provider).png")
      }
      return account
    }
    let payload = request.serializedBytes()
    var call = Call(
      id: 9, method: "/anonauth.v1.AdminService/ImportAccounts", timeoutMs: 60_000, payload: payload)
    for index in 0..<CallLimits.maxMetadataEntries { call.metadata["x-key-\(index)"] = "value" }
    let frame = try Frame(serializedBytes: Frame(kind: .call(call)).serializedBytes())
    guard case .call(let decoded)? = frame.kind else {
      Issue.record("not a call")
      return
    }
    #expect(try ImportAccountsRequest(serializedBytes: decoded.payload) == request)
    let cost = ImportAccountsRequest.measureDecode(payload)
    #expect(cost.decoded)
    #expect(cost.allocations <= cost.allocationBound)
  }

  @Test func deletingAThousandUidsDecodes() throws {
    let request = DeleteAccountsRequest(
      projectId: "project", localIds: (0..<1000).map { "uid-\($0)-0123456789abcdefghijklmnop" })
    #expect(try DeleteAccountsRequest(serializedBytes: request.serializedBytes()) == request)
  }

  /// An export page of 1000 accounts with ten providers each, as the CLI decodes it.
  @Test func theLargestExportPageDecodes() throws {
    let providers = (0..<10).map { provider in
      ProviderInfo(
        providerId: "p\(provider).example.com", rawId: "raw-\(provider)", email: "a@example.com",
        displayName: "A")
    }
    let account = AccountInfo(
      localId: "uid", isAnonymous: true, email: "a@example.com", emailVerified: true, displayName: "A",
      disabled: true, createdAtMs: 1, lastSignInAtMs: 2, lastRefreshAtMs: 3, providers: providers,
      validSince: 4, customClaimsJson: "{}", scheduledDeletionAtMs: 5)
    let exported = ExportedAccount(
      account: account, photoUrl: "https://example.com/a.png", firebasePasswordHash: [1],
      firebaseSalt: [2], anonauthPasswordHash: "h",
      providerPhotoUrls: providers.map { "https://example.com/\($0.rawId).png" })
    let response = ExportAccountsResponse(
      accounts: [ExportedAccount](repeating: exported, count: 1000), nextPageToken: "next")
    let cost = ExportAccountsResponse.measureDecode(response.serializedBytes())
    #expect(cost.verdict == .withinLimits)
    #expect(cost.tally.cost < CallLimits.maxDecodeCost)
    #expect(try ExportAccountsResponse(serializedBytes: response.serializedBytes()) == response)
  }
}
