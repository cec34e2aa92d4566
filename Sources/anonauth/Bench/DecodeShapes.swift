import AnonAuthWire

/// The frames and payloads `anonauth bench decode` decodes: a plain one first (the
/// yardstick), then the hostile shapes at the full size and at the largest size the
/// limits accept, then the largest legitimate admin batches.
struct DecodeShapes {
  let size: Int

  /// Room for the frame's own fields around a payload.
  private static let envelope = 64

  var all: [DecodeBench.Shape] {
    let unit = CallLimits.maxDecodeCost
    return [
      frameOnly("plain frame: one bytes field (payload not decoded)", plainFrame()),
      payload(
        "plain payload: one string (DeleteAccounts.project_id)", DeleteAccountsRequest.self, plainPayload()),
      frameOnly("frame of 2-byte unknown fields (78 00)", repeated([0x78, 0x00], filling: size)),
      payload("payload of 2-byte unknown fields (78 00)", SignUpRequest.self, fill([0x78, 0x00])),
      payload(
        "payload of empty strings (DeleteAccounts.local_ids)", DeleteAccountsRequest.self, fill([0x12, 0x00])),
      payload(
        "  the same, at the cost limit", DeleteAccountsRequest.self,
        repeated([0x12, 0x00], count: unit / 2 - 1)),
      frameOnly("frame of map entries (Reply.status.details)", replyWithDetails(count: size / 2)),
      frameOnly(
        "  the same, at the cost limit", replyWithDetails(count: CallLimits.maxFrameDecodeCost / 3 - 4)),
      payload(
        "payload of one string field given again and again (SignUp)", SignUpRequest.self,
        signUpEmails(count: (size - Self.envelope) / 2 - 8)),
      payload(
        "  the same, at the cost limit", SignUpRequest.self,
        signUpEmails(count: CallLimits.maxFixedShapeDecodeCost / 2 - 8)),
      payload(
        "payload of empty nested messages (ImportAccounts)", ImportAccountsRequest.self, fill([0x12, 0x00])),
      payload(
        "  the same, at the cost limit", ImportAccountsRequest.self,
        repeated([0x12, 0x00], count: unit / importedAccountCost - 1)),
      payload(
        "payload of nested accounts > providers (ImportAccounts)", ImportAccountsRequest.self,
        fill([0x12, 0x02, 0x62, 0x00])),
      payload(
        "  the same, at the cost limit", ImportAccountsRequest.self,
        repeated([0x12, 0x02, 0x62, 0x00], count: unit / (importedAccountCost + 6) - 1)),
      payload(
        "legit: ImportAccounts of 1000 accounts x 10 providers", ImportAccountsRequest.self, bigImport()),
      payload("legit: DeleteAccounts of 1000 uids", DeleteAccountsRequest.self, bigDelete()),
    ]
  }

  /// What an empty `ImportedAccount` costs the pre-scan: 1 plus its 13 fields.
  private var importedAccountCost: Int { 14 }

  private func frameOnly(_ name: String, _ bytes: [UInt8]) -> DecodeBench.Shape {
    DecodeBench.Shape(name: name, bytes: bytes.count) { (try? Frame(serializedBytes: bytes)) != nil }
  }

  /// A frame carrying `payload` in a call; a decode is the frame's and then the payload's,
  /// as the router does.
  private func payload<Request: ProtoMessage>(_ name: String, _: Request.Type, _ payload: [UInt8])
    -> DecodeBench.Shape
  {
    let bytes = frame(payload: payload)
    return DecodeBench.Shape(name: name, bytes: bytes.count) {
      guard let frame = try? Frame(serializedBytes: bytes), case .call(let call)? = frame.kind else {
        return false
      }
      return (try? Request(serializedBytes: call.payload)) != nil
    }
  }

  private func frame(payload: [UInt8]) -> [UInt8] {
    Frame(kind: .call(Call(id: 1, method: AdminServiceMethods.importAccounts.path, payload: payload)))
      .serializedBytes()
  }

  private func plainFrame() -> [UInt8] {
    frame(payload: [UInt8](repeating: 0x5a, count: size - Self.envelope))
  }

  private func plainPayload() -> [UInt8] {
    DeleteAccountsRequest(projectId: String(repeating: "p", count: size - 2 * Self.envelope))
      .serializedBytes()
  }

  /// `unit` repeated to fill a payload of the frame.
  private func fill(_ unit: [UInt8]) -> [UInt8] { repeated(unit, filling: size - Self.envelope) }

  private func repeated(_ unit: [UInt8], filling bytes: Int) -> [UInt8] {
    repeated(unit, count: bytes / unit.count)
  }

  private func repeated(_ unit: [UInt8], count: Int) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(unit.count * count)
    for _ in 0..<count { out += unit }
    return out
  }

  /// `SignUp { email_password { email: "" } }` with the email given `count` times.
  private func signUpEmails(count: Int) -> [UInt8] {
    let emails = repeated([0x0a, 0x00], count: count)
    var out: [UInt8] = [0x12]
    appendVarint(UInt64(emails.count), to: &out)
    return out + emails
  }

  /// A `Frame` with a `Reply` whose status has `count` empty `details` entries (`22 00`).
  private func replyWithDetails(count: Int) -> [UInt8] {
    let status = repeated([0x22, 0x00], count: min(count, (size - Self.envelope) / 2))
    var reply: [UInt8] = [0x12]
    appendVarint(UInt64(status.count), to: &reply)
    reply += status
    var frame: [UInt8] = [0x12]
    appendVarint(UInt64(reply.count), to: &frame)
    return frame + reply
  }

  private func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }

  /// The largest import batch (1000 accounts), each with every field and 10 providers.
  private func bigImport() -> [UInt8] {
    var request = ImportAccountsRequest(projectId: "bench-project")
    request.accounts = (0..<1000).map { index in
      var account = ImportedAccount(
        localId: "uid-\(index)-0123456789abcdef", email: "user\(index)@example.com", emailVerified: true,
        displayName: "User \(index)", photoUrl: "https://example.com/photos/\(index).png",
        createdAtMs: 1_700_000_000_000, lastSignInAtMs: 1_700_000_100_000,
        customClaimsJson: "{\"role\":\"user\"}",
        passwordHash: [UInt8](repeating: 7, count: 32), salt: [UInt8](repeating: 9, count: 16))
      account.providers = (0..<10).map { provider in
        ImportedProvider(
          providerId: "provider\(provider).example.com", rawId: "raw-\(index)-\(provider)",
          email: "user\(index)@example.com", displayName: "User \(index)",
          photoUrl: "https://example.com/p/\(index)/\(provider).png")
      }
      return account
    }
    return request.serializedBytes()
  }

  private func bigDelete() -> [UInt8] {
    DeleteAccountsRequest(
      projectId: "bench-project", localIds: (0..<1000).map { "uid-\($0)-0123456789abcdefghijkl" }
    ).serializedBytes()
  }
}
