import AnonAuthNet
import Testing

/// Lengths a hostile server sends: every one must be rejected with an error, never
/// trap the process (a signed chunk size once sliced with a negative length).
@Suite struct HTTPResponseParserLengthTests {
  func parse(_ text: String, step: Int = 1 << 20, maxBody: Int = 1024) throws(HTTPClientError) -> HTTPResponse
  {
    try parseHTTPResponse(text, step: step, maxBody: maxBody)
  }

  func chunked(_ sizeLine: String) -> String {
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(sizeLine)\r\nabcde\r\n0\r\n\r\n"
  }

  @Test(arguments: [
    "-1", "+5", "0x10", " -1", "-0", "- 1", "1 0", "5-", "", " ", ";ext", "ffffffffff",
    "7fffffffffffffff", "-8000000000000000", "123456789", "\u{0663}",
  ])
  func badChunkSizes(line: String) {
    for step in [1, 1 << 20] {
      #expect(throws: HTTPClientError.self) { try parse(chunked(line), step: step) }
    }
  }

  @Test func hugeButWellFormedChunkSizeIsTooLarge() {
    #expect(throws: HTTPClientError.tooLarge) { try parse(chunked("ffffffff")) }
  }

  @Test(arguments: ["5", "05", "00000005", "5 ", "5\t", "5;name=value", "5 ;x"])
  func goodChunkSizes(line: String) throws {
    let response = try parse(chunked(line), step: 1)
    #expect(response.body == Array("abcde".utf8))
  }

  @Test(arguments: ["+5", "-0", "-5", "0x5", "5.0", "5 5", "", "\u{0665}", "99999999999999999999"])
  func badContentLengths(value: String) {
    let text = "HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\nabcde"
    #expect(throws: HTTPClientError.self) { try parse(text) }
  }

  @Test func chunkSizeParser() {
    #expect(HTTPResponseParser.chunkSize(ArraySlice("1aF".utf8)) == 0x1af)
    #expect(HTTPResponseParser.chunkSize(ArraySlice("-1".utf8)) == nil)
    #expect(HTTPResponseParser.chunkSize(ArraySlice("+1".utf8)) == nil)
  }
}
