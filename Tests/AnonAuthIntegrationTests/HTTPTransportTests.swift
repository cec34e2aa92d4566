import AnonAuthTestSupport
import AnonAuthWire
import Foundation
import Testing

/// HTTP/1.1 on the RPC port and on the emulator listener, against the real daemon
/// (docs/protocol.md §1 and §11). A path no application serves is answered 404 in
/// Firebase's error shape, with or without the JSON API wired in: enough to see the
/// transport work.
@Suite(.serialized) struct HTTPTransportTests {
  static let check = "/anonauth.v1.HealthService/Check"

  static func get(_ path: String, _ extra: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: localhost\r\n\(extra)\r\n"
  }

  @Test func alpnHTTP11ServesJSONAndKeepsTheConnectionWhileAnonauthStillWorks() async throws {
    let daemon = try await DaemonProcess.start()
    let http = try BlockingTLSClient(address: daemon.rpc, caFile: daemon.caFile, alpn: ["http/1.1"])
    #expect(http.selectedProtocol == "http/1.1")
    for i in 0..<3 {
      try http.send(Self.get("/no/such/path", "x-request-id: it-\(i)\r\n"))
      let response = try http.response()
      #expect(response.status == 404)
      #expect(response.headers["content-type"]?.hasPrefix("application/json") == true)
      #expect(response.headers["x-request-id"] == "it-\(i)")
      #expect(response.headers["connection"] == nil, "kept alive")
      let body = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
      let error = body?["error"] as? [String: Any]
      #expect(error?["code"] as? Int == 404)
      #expect(error?["status"] as? String == "NOT_FOUND")
    }
    // The native protocol on the same port, by its own ALPN.
    let native = try BlockingTLSClient(address: daemon.rpc, caFile: daemon.caFile, alpn: ["anonauth/1"])
    #expect(native.selectedProtocol == "anonauth/1")
    let client = try daemon.client()
    let response = try await client.call(Self.check, CheckRequest(), as: CheckResponse.self)
    #expect(response.status == "SERVING")
  }

  @Test func theServersPreferenceWinsOverTheClientsOrder() async throws {
    let daemon = try await DaemonProcess.start()
    let both = try BlockingTLSClient(
      address: daemon.rpc, caFile: daemon.caFile, alpn: ["http/1.1", "anonauth/1"])
    #expect(both.selectedProtocol == "anonauth/1")
  }

  @Test func emulatorListenerServesPlainHTTPOnLoopbackPortZero() async throws {
    let daemon = try await DaemonProcess.start(["--firebase-emulator-listen", "127.0.0.1:0"])
    let emulator = try #require(daemon.emulator)
    #expect(emulator.hasPrefix("127.0.0.1:") && !emulator.hasSuffix(":0"))
    let response = try await OpsHTTP.raw(
      emulator, Self.get("/no/such/path", "Connection: close\r\n"))
    #expect(response.status == 404)
    #expect(response.body.contains("\"NOT_FOUND\""))
  }
}
