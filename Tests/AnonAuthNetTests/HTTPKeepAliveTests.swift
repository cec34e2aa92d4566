import AnonAuthNet
import Testing

/// When a bench's kept-alive connection may carry the next request: a connection reused
/// after a response framed by its end would wait forever for a reply that never comes.
@Suite struct HTTPKeepAliveTests {
  func keeps(_ text: String) throws -> Bool {
    HTTPKeepAlive.keepsConnection(try parseHTTPResponse(text))
  }

  @Test func aResponseWithALengthKeepsTheConnection() throws {
    #expect(try keeps("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"))
    #expect(try keeps("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
    #expect(try keeps("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"))
    #expect(try keeps("HTTP/1.1 204 No Content\r\n\r\n"))
  }

  @Test func connectionCloseEndsIt() throws {
    #expect(try !keeps("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"))
    #expect(
      try !keeps(
        "HTTP/1.1 429 Too Many Requests\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n"))
  }

  @Test func aBodyFramedByTheEndOfTheConnectionEndsIt() throws {
    #expect(try !keeps("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}"))
  }
}
