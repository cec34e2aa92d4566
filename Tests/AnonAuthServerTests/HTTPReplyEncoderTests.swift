import Testing

@testable import AnonAuthServer

/// The response bytes: only the transport frames a response, and no header an
/// application returns can split it.
@Suite struct HTTPReplyEncoderTests {
  static func text(_ reply: HTTPReply, close: Bool = false, omitBody: Bool = false) -> String {
    String(
      decoding: HTTPReplyEncoder.encode(
        reply, requestID: "rid", close: close, omitBody: omitBody, now: 784_111_777),
      as: UTF8.self)
  }

  @Test func theTransportWritesLengthDateRequestIDAndClose() {
    let out = Self.text(
      HTTPReply(status: 200, headers: [("content-type", "application/json")], body: Array("{}".utf8)),
      close: true)
    #expect(
      out
        == "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n"
        + "date: Sun, 06 Nov 1994 08:49:37 GMT\r\nx-request-id: rid\r\nconnection: close\r\n\r\n{}")
  }

  @Test func anApplicationCannotFrameTheResponseOrSplitIt() {
    let reply = HTTPReply(
      status: 200,
      headers: [
        ("Content-Length", "999"), ("Transfer-Encoding", "chunked"), ("Connection", "keep-alive"),
        ("x-evil", "a\r\nSet-Cookie: b"), ("x-fine", "ok"),
      ], body: Array("abc".utf8))
    let out = Self.text(reply)
    #expect(!out.contains("999") && !out.contains("chunked") && !out.contains("keep-alive"))
    #expect(!out.contains("Set-Cookie"))
    #expect(out.contains("x-fine: ok\r\n"))
    #expect(out.contains("content-length: 3\r\n"))
  }

  @Test func aHeadRequestGetsTheLengthWithoutTheBody() {
    let out = Self.text(HTTPReply(status: 200, body: Array("abc".utf8)), omitBody: true)
    #expect(out.hasSuffix("\r\n\r\n") && out.contains("content-length: 3\r\n"))
  }

  @Test func errorsUseFirebasesBodyShape() {
    let reply = HTTPReplyEncoder.errorReply(status: 413, message: "too \"big\"\n")
    #expect(reply.headers.first?.1.hasPrefix("application/json") == true)
    #expect(
      String(decoding: reply.body, as: UTF8.self)
        == #"{"error":{"code":413,"message":"too \"big\"\n","status":"INVALID_ARGUMENT"}}"#)
  }
}
