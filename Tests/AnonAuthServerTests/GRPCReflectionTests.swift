import Testing

@testable import AnonAuthServer

/// Server reflection answers each kind of request from the embedded descriptors, one
/// response per request, in order.
@Suite struct GRPCReflectionTests {
  static let reflection = GRPCReflection(
    package: "grpc.reflection.v1", services: GRPCDescriptorPool.embedded.services)

  /// What a response says, decoded.
  enum Answer: Equatable {
    case files([String])
    case services([String])
    case extensionNumbers(String, [Int32])
    case error(Int32)
  }

  static func request(_ field: UInt64, _ text: String, host: String = "") -> [UInt8] {
    var writer = GRPCProtoWriter()
    if !host.isEmpty { writer.string(1, host) }
    writer.string(field, text)
    return writer.bytes
  }

  static func fields(_ bytes: ArraySlice<UInt8>) -> [(UInt64, GRPCProtoReader.Value)] {
    var reader = GRPCProtoReader(bytes)
    var fields: [(UInt64, GRPCProtoReader.Value)] = []
    while let field = try? reader.next() { fields.append(field) }
    return fields
  }

  /// The answer, checking that the response echoes the request and its host.
  static func decode(_ response: [UInt8], request: [UInt8], host: String = "") -> Answer? {
    let top = fields(response[...])
    #expect(top.first { $0.0 == 1 }?.1.string ?? "" == host)
    #expect(top.first { $0.0 == 2 }?.1.slice.map(Array.init) == request)
    guard let (number, value) = top.last, let body = value.slice else { return nil }
    let inner = fields(body)
    switch number {
    case 4:
      // The name (field 1) of each FileDescriptorProto.
      return .files(inner.compactMap { $0.1.slice.flatMap { fields($0).first { $0.0 == 1 }?.1.string } })
    case 5:
      return .extensionNumbers(
        inner.first { $0.0 == 1 }?.1.string ?? "",
        inner.filter { $0.0 == 2 }.compactMap { $0.1.integer.map { Int32(truncatingIfNeeded: $0) } })
    case 6:
      return .services(inner.compactMap { $0.1.slice.flatMap { fields($0).first?.1.string } })
    case 7:
      return .error(Int32(truncatingIfNeeded: inner.first { $0.0 == 1 }?.1.integer ?? 0))
    default:
      return nil
    }
  }

  static func ask(_ request: [UInt8], sent: inout Set<String>) -> Answer? {
    guard let response = reflection.answer(request, sent: &sent) else { return nil }
    return decode(response, request: request)
  }

  @Test func listServicesNamesEveryService() {
    var sent: Set<String> = []
    #expect(
      Self.ask(Self.request(7, "*"), sent: &sent)
        == .services([
          "anonauth.v1.AccountService", "anonauth.v1.AdminService", "anonauth.v1.HealthService",
          "anonauth.v1.TokenService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection",
        ]))
  }

  @Test func fileByFilenameComesWithItsImports() {
    var sent: Set<String> = []
    #expect(
      Self.ask(Self.request(3, "anonauth/v1/admin.proto"), sent: &sent)
        == .files(["anonauth/v1/admin.proto", "anonauth/v1/account.proto"]))
    #expect(Self.ask(Self.request(3, "anonauth/v1/missing.proto"), sent: &sent) == .error(5))
  }

  @Test func fileContainingSymbolOfEachKind() {
    for symbol in [
      "anonauth.v1.AccountService", "anonauth.v1.AccountService.SignUp", "anonauth.v1.SignUpRequest",
      ".anonauth.v1.AuthResponse", "anonauth.v1.SignUpRequest.anonymous", "anonauth.v1.SignUpRequest.kind",
    ] {
      var sent: Set<String> = []
      #expect(
        Self.ask(Self.request(4, symbol), sent: &sent) == .files(["anonauth/v1/account.proto"]), "\(symbol)")
    }
    var sent: Set<String> = []
    #expect(
      Self.ask(Self.request(4, "grpc.health.v1.HealthCheckResponse.ServingStatus"), sent: &sent)
        == .files(["grpc/health/v1/health.proto"]))
    #expect(Self.ask(Self.request(4, "anonauth.v1.Nothing"), sent: &sent) == .error(5))
  }

  @Test func extensionsAreNotFoundAndKnownMessagesHaveNone() {
    var sent: Set<String> = []
    var extensionRequest = GRPCProtoWriter()
    extensionRequest.string(1, "anonauth.v1.SignUpRequest")
    extensionRequest.int32(2, 100)
    var request = GRPCProtoWriter()
    request.bytes(5, extensionRequest.bytes)
    #expect(Self.ask(request.bytes, sent: &sent) == .error(5))
    #expect(
      Self.ask(Self.request(6, "anonauth.v1.SignUpRequest"), sent: &sent)
        == .extensionNumbers("anonauth.v1.SignUpRequest", []))
    #expect(Self.ask(Self.request(6, "anonauth.v1.Nothing"), sent: &sent) == .error(5))
    #expect(Self.ask(Self.request(6, "anonauth.v1.AccountService"), sent: &sent) == .error(5))
  }

  @Test func theHostIsEchoedAndAnEmptyQuestionIsInvalid() throws {
    var sent: Set<String> = []
    let request = Self.request(7, "", host: "auth.example")
    let response = try #require(Self.reflection.answer(request, sent: &sent))
    #expect(Self.decode(response, request: request, host: "auth.example") != nil)
    var hostOnly = GRPCProtoWriter()
    hostOnly.string(1, "auth.example")
    let invalid = try #require(Self.reflection.answer(hostOnly.bytes, sent: &sent))
    #expect(Self.decode(invalid, request: hostOnly.bytes, host: "auth.example") == .error(3))
  }

  @Test func oneResponsePerRequestInOrderOnTheStream() async {
    let harness = GRPCLocalMethodHarness()
    harness.start(Self.reflection)
    let requests = [
      Self.request(7, ""), Self.request(3, "anonauth/v1/token.proto"), Self.request(4, "anonauth.v1.Nothing"),
    ]
    for request in requests { harness.send(request) }
    var sent: Set<String> = []
    #expect(
      Self.decode(await harness.next() ?? [], request: requests[0]) == Self.ask(requests[0], sent: &sent))
    #expect(
      Self.decode(await harness.next() ?? [], request: requests[1]) == .files(["anonauth/v1/token.proto"]))
    #expect(Self.decode(await harness.next() ?? [], request: requests[2]) == .error(5))
    harness.halfClose()
    #expect(await harness.next() == nil)
    #expect(await harness.finalStatus() == .ok)
  }

  @Test func undecodableRequestEndsTheCall() async {
    let harness = GRPCLocalMethodHarness()
    harness.start(Self.reflection)
    harness.send([0x1a, 0x05, 0x61])  // field 3, length 5, one byte
    #expect(await harness.next() == nil)
    #expect(await harness.finalStatus()?.code == .internalError)
    #expect(GRPCReflectionRequest([0x18, 0x01]) == nil)  // field 3 as a varint
  }

  @Test func v1alphaServesTheSameAnswersUnderItsOwnPath() {
    let alpha = GRPCReflection(package: "grpc.reflection.v1alpha", services: ["a.B"])
    #expect(alpha.path == "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
    #expect(Self.reflection.path == "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
    var sent: Set<String> = []
    let request = Self.request(7, "")
    #expect(
      alpha.answer(request, sent: &sent).map { Self.decode($0, request: request) } == .services(["a.B"]))
  }
}
