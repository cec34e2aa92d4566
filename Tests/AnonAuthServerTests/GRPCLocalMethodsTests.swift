import Testing

@testable import AnonAuthServer

/// The registry of the methods the gRPC transport serves itself: found by exact path,
/// a later registration at the same path wins, anything else is left to the router.
@Suite struct GRPCLocalMethodsTests {
  struct Echo: GRPCLocalMethod {
    let path: String
    let tag: String
    var hasDefaultDeadline: Bool { true }

    func run(requests: AsyncStream<[UInt8]>, responses: GRPCResponseWriter) async -> GRPCFinalStatus {
      GRPCFinalStatus(.ok, tag)
    }
  }

  @Test func findsMethodsByExactPath() {
    let methods = GRPCLocalMethods([
      Echo(path: "/grpc.health.v1.Health/Check", tag: "check"),
      Echo(path: "/grpc.health.v1.Health/Watch", tag: "watch"),
    ])
    #expect(methods.paths == ["/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"])
    #expect((methods.method(at: "/grpc.health.v1.Health/Watch") as? Echo)?.tag == "watch")
    #expect(methods.method(at: "/grpc.health.v1.health/watch") == nil)
    #expect(methods.method(at: "/anonauth.v1.AccountService/SignUp") == nil)
    #expect(GRPCLocalMethods().isEmpty)
  }

  @Test func aLaterMethodAtTheSamePathReplacesTheEarlierOne() {
    var methods = GRPCLocalMethods([Echo(path: "/a.B/C", tag: "first")])
    methods.add(Echo(path: "/a.B/C", tag: "second"))
    #expect(methods.paths == ["/a.B/C"])
    #expect((methods.method(at: "/a.B/C") as? Echo)?.tag == "second")
  }
}
