import AnonAuthNet
import Testing

@Suite struct HTTPResponseParserTests {
  func parse(_ text: String, step: Int = 1 << 20, maxBody: Int = 1024) throws(HTTPClientError) -> HTTPResponse
  {
    try parseHTTPResponse(text, step: step, maxBody: maxBody)
  }

  @Test(arguments: [1, 3, 1 << 20])
  func contentLength(step: Int) throws {
    let response = try parse(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-A: 1\r\nx-a: 2\r\n\r\n{\"keys\":[]}",
      step: step)
    #expect(response.status == 200)
    #expect(response.headers["content-type"] == "application/json")
    #expect(response.headers["x-a"] == "1, 2")
    #expect(String(decoding: response.body, as: UTF8.self) == "{\"keys\":[]}")
  }

  @Test func completeBeforeTheConnectionEnds() throws {
    var parser = HTTPResponseParser()
    try parser.append(Array("HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nnoEXTRA".utf8))
    #expect(parser.isComplete)
    #expect(parser.response?.status == 404)
    #expect(parser.response?.body == Array("no".utf8))
  }

  @Test(arguments: [1, 2, 7, 1 << 20])
  func chunked(step: Int) throws {
    let text =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      + "4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n"
    let response = try parse(text, step: step)
    #expect(String(decoding: response.body, as: UTF8.self) == "Wikipedia in\r\n\r\nchunks.")
  }

  @Test func untilTheConnectionCloses() throws {
    let response = try parse("HTTP/1.0 200 OK\r\n\r\nall of it")
    #expect(response.body == Array("all of it".utf8))
  }

  @Test func interimResponsesAreSkippedAndEmptyBodiesKnown() throws {
    let response = try parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nX: y\r\n\r\n")
    #expect(response.status == 204 && response.body.isEmpty && response.headers["x"] == "y")
    #expect(try parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").body.isEmpty)
    #expect(try parse("HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx").status == 200)
  }

  @Test(arguments: [
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc",  // cut short
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",  // cut in a chunk
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n",  // no last chunk
    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n",  // head not finished
  ])
  func truncatedResponsesFail(text: String) {
    #expect(throws: HTTPClientError.self) { _ = try parse(text) }
  }

  @Test(arguments: [
    "HTTP/2 200 OK\r\n\r\n",
    "HTTP/1.1 20 OK\r\n\r\n",
    "HTTP/1.1 abc OK\r\n\r\n",
    "HTTP/1.1 700 Odd\r\n\r\n",
    "ICY 200 OK\r\n\r\n",
    "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
    "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
    "HTTP/1.1 200 OK\r\n folded: header\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nab",
    "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX",
    "HTTP/1.1 101 Switching Protocols\r\n\r\n",
  ])
  func malformedResponsesFail(text: String) {
    #expect(throws: HTTPClientError.self) { _ = try parse(text) }
  }

  @Test func sizesAreBounded() {
    #expect(throws: HTTPClientError.tooLarge) {
      _ = try parse("HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n")
    }
    #expect(throws: HTTPClientError.tooLarge) {
      _ = try parse("HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "x", count: 1025))
    }
    #expect(throws: HTTPClientError.tooLarge) {
      _ = try parse(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + String(repeating: "x", count: 1024)
          + "\r\n1\r\nx\r\n0\r\n\r\n")
    }
    #expect(throws: HTTPClientError.tooLarge) {
      _ = try parse("HTTP/1.1 200 OK\r\nX: " + String(repeating: "h", count: 300) + "\r\n\r\n")
    }
    // Exactly at the bound is fine.
    #expect(throws: Never.self) {
      _ = try parse("HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n" + String(repeating: "x", count: 1024))
    }
  }

  @Test(
    arguments: [
      ("public, max-age=300", nil, 300),
      ("max-age=\"60\"", nil, 60),
      ("public, max-age=300", "100", 200),
      ("max-age=10", "100", 0),
      ("no-store", nil, 0),
      ("no-cache, max-age=600", nil, 0),
      ("max-age=abc", nil, 0),
      ("MAX-AGE=5", nil, 5),
      ("max-age=99999999999999", nil, Int(Int32.max)),
    ] as [(String, String?, Int)])
  func cacheControl(control: String, age: String?, freshness: Int) {
    var headers = ["cache-control": control]
    if let age { headers["age"] = age }
    #expect(HTTPResponse(status: 200, headers: headers, body: []).freshnessSeconds == freshness)
  }

  @Test func noCacheControlSaysNothing() {
    #expect(HTTPResponse(status: 200, headers: [:], body: []).freshnessSeconds == nil)
    #expect(HTTPResponse(status: 200, headers: ["cache-control": "public"], body: []).freshnessSeconds == nil)
  }
}

@Suite struct HTTPSURLTests {
  @Test func parses() throws {
    let url = try HTTPSURL("https://Graph.Facebook.com/debug_token?input_token=a%2Bb&x=1#frag")
    #expect(url.host == "graph.facebook.com" && url.port == 443)
    #expect(url.target == "/debug_token?input_token=a%2Bb&x=1")
    #expect(url.hostHeader == "graph.facebook.com")
    let local = try HTTPSURL("https://127.0.0.1:8443")
    #expect(local.host == "127.0.0.1" && local.port == 8443 && local.target == "/")
    #expect(local.hostHeader == "127.0.0.1:8443")
    let v6 = try HTTPSURL("https://[::1]:9443/jwks")
    #expect(v6.host == "::1" && v6.port == 9443 && v6.hostHeader == "[::1]:9443")
    #expect(try HTTPSURL("https://example.com?q=1").target == "/?q=1")
  }

  @Test(arguments: [
    "http://example.com/", "ftp://example.com", "https://", "https:///path", "https://user:pw@example.com/",
    "https://example.com:0/", "https://example.com:99999/", "https://example.com:8x/",
    "https://exa mple.com/",
    "https://example.com/a b", "https://example.com/\r\nX: y", "https://[::1/", "example.com",
  ])
  func refuses(text: String) {
    #expect(throws: HTTPClientError.badURL) { _ = try HTTPSURL(text) }
  }
}
