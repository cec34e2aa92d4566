import Synchronization
import Testing

@testable import AnonAuthServer

/// `Bearer owner` is the admin key on the emulator listener only, for the call and for
/// the large-body admission; everywhere else it is one more wrong key.
@Suite struct AdminEmulatorOwnerTests {
  /// Answers with the authorization header it was handed.
  struct Echo: HTTPApplication {
    func respond(to request: HTTPRequest, info: HTTPCallInfo) async -> HTTPReply {
      HTTPReply(status: 200, body: Array((request.header("authorization") ?? "-").utf8))
    }
  }

  static let processKey = "process-key-123"
  static let gate = AdminEmulatorOwner(
    api: Echo(), processAdminKey: processKey, isAdminKey: { $0 == "real-admin-key" || $0 == processKey })

  /// What the Admin SDK sends with `FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:9099`.
  static let sdkHeaders: [(name: String, value: String)] = [("host", "127.0.0.1:9099")]

  static func authorization(
    _ value: String?, on listener: HTTPListenerKind, gate: AdminEmulatorOwner = gate,
    headers: [(name: String, value: String)] = sdkHeaders
  ) async -> String {
    let request = HTTPRequest(
      method: "POST", path: "/v1/projects/p/accounts:lookup",
      headers: headers + (value.map { [("authorization", $0)] } ?? []))
    let reply = await gate.respond(
      to: request, info: HTTPCallInfo(peerIP: "127.0.0.1", listener: listener, requestID: "t"))
    return String(decoding: reply.body, as: UTF8.self)
  }

  @Test("Bearer owner becomes the process key on the emulator listener, and only there")
  func substitution() async {
    #expect(await Self.authorization("Bearer owner", on: .emulator) == "Bearer \(Self.processKey)")
    #expect(await Self.authorization("Bearer owner", on: .rpcPort) == "Bearer owner")
    #expect(await Self.authorization("Bearer other", on: .emulator) == "Bearer other")
    #expect(await Self.authorization(nil, on: .emulator) == "-")
    let off = AdminEmulatorOwner(api: Echo(), processAdminKey: nil, isAdminKey: { _ in false })
    #expect(await Self.authorization("Bearer owner", on: .emulator, gate: off) == "Bearer owner")
  }

  @Test("A web page that reached the listener by a name of its own (DNS rebinding) gets no admin key")
  func rebinding() async {
    let owner = "Bearer owner"
    let page = [
      (name: "host", value: "evil.example:9099"), (name: "origin", value: "http://evil.example:9099"),
    ]
    #expect(await Self.authorization(owner, on: .emulator, headers: page) == owner)
    #expect(await Self.authorization(owner, on: .emulator, headers: [("host", "evil.example:9099")]) == owner)
    let loopbackPage = [
      (name: "host", value: "127.0.0.1:9099"), (name: "origin", value: "http://127.0.0.1:3000"),
    ]
    #expect(await Self.authorization(owner, on: .emulator, headers: loopbackPage) == owner)
    #expect(await Self.authorization(owner, on: .emulator, headers: []) == owner)
    for host in ["localhost:9099", "LOCALHOST", "127.0.0.1", "127.1.2.3:1", "[::1]:9099"] {
      #expect(await Self.authorization(owner, on: .emulator, headers: [("host", host)]) != owner, "\(host)")
    }
    for host in ["127.0.0.1.evil.example", "127.0.0.256", "[::1", "::1x", "localhost.evil"] {
      #expect(!AdminEmulatorOwner.isLoopbackHost(host), "\(host)")
    }
    var head = HTTPRequest(method: "POST", path: "/v1/projects/p/accounts:batchCreate", headers: page)
    head.headers.append(("authorization", owner))
    #expect(!Self.gate.admitsLargeBody(head, listener: .emulator))
  }

  @Test("Large bodies: a valid admin key anywhere, Bearer owner on the emulator listener only")
  func largeBodies() {
    func head(_ authorization: String?) -> HTTPRequest {
      HTTPRequest(
        method: "POST", path: "/v1/projects/p/accounts:batchCreate",
        headers: Self.sdkHeaders + (authorization.map { [("authorization", $0)] } ?? []))
    }
    let gate = Self.gate
    #expect(gate.admitsLargeBody(head("Bearer owner"), listener: .emulator))
    #expect(!gate.admitsLargeBody(head("Bearer owner"), listener: .rpcPort))
    #expect(!gate.admitsLargeBody(head("Bearer owner")))
    #expect(gate.admitsLargeBody(head("Bearer real-admin-key"), listener: .rpcPort))
    #expect(!gate.admitsLargeBody(head("Bearer wrong"), listener: .emulator))
    #expect(!gate.admitsLargeBody(head(nil), listener: .emulator))
    #expect(!gate.admitsLargeBody(head("Basic real-admin-key"), listener: .rpcPort))
  }
}
