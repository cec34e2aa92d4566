import Testing

@testable @_spi(Fuzzing) import AnonAuthServer

/// The HTTP/1.1 request parser's rules (docs/protocol.md §11), one test per rule: each
/// input here is one that a parser without that check would take as a request (or wait
/// on for ever), so each test fails when its check is removed.
@Suite struct HTTPRequestParserTests {
  /// What the parser made of `text` (fed in one piece, or byte by byte): the requests
  /// it gave, and the error it stopped on.
  struct Outcome {
    var requests: [(HTTPRequest, HTTPRequestFraming)] = []
    var error: HTTPTransportError?
    var status: Int? { error?.status }
  }

  static func parse(_ text: String, bodyLimit: Int = 1024, byteByByte: Bool = false) -> Outcome {
    parse(Array(text.utf8), bodyLimit: bodyLimit, byteByByte: byteByByte)
  }

  static func parse(_ bytes: [UInt8], bodyLimit: Int = 1024, byteByByte: Bool = false) -> Outcome {
    var parser = HTTPRequestParser()
    var outcome = Outcome()
    let pieces = byteByByte ? bytes.map { [$0] } : [bytes]
    do throws(HTTPTransportError) {
      for piece in pieces {
        parser.append(piece)
        loop: while true {
          switch try parser.next() {
          case .needMore: break loop
          case .head: try parser.admitBody(limit: bodyLimit)
          case .request(let request, let framing): outcome.requests.append((request, framing))
          }
        }
      }
    } catch {
      outcome.error = error
    }
    return outcome
  }

  static let host = "Host: example.test\r\n"

  @Test func aSimpleGetIsParsed() throws {
    let outcome = Self.parse("GET /v1/token?key=abc HTTP/1.1\r\n\(Self.host)X-Request-Id: r1\r\n\r\n")
    #expect(outcome.error == nil)
    let (request, framing) = try #require(outcome.requests.first)
    #expect(request.method == "GET")
    #expect(request.path == "/v1/token")
    #expect(request.query == "key=abc")
    #expect(request.header("x-request-id") == "r1")
    #expect(framing == HTTPRequestFraming(contentLength: 0, keepAlive: true, expectsContinue: false))
  }

  @Test func aBodyIsFramedByContentLengthAlone() throws {
    let text = "POST /v1/accounts:signUp HTTP/1.1\r\n\(Self.host)Content-Length: 5\r\n\r\nhelloGET"
    for byteByByte in [false, true] {
      let outcome = Self.parse(text, byteByByte: byteByByte)
      #expect(outcome.error == nil)
      #expect(outcome.requests.count == 1)
      #expect(outcome.requests.first?.0.body == Array("hello".utf8))
    }
  }

  @Test func pipelinedRequestsComeOutInOrder() {
    let one = "POST /a HTTP/1.1\r\n\(Self.host)Content-Length: 2\r\n\r\nab"
    let two = "GET /b HTTP/1.1\r\n\(Self.host)\r\n"
    let outcome = Self.parse(one + two + one)
    #expect(outcome.requests.map(\.0.path) == ["/a", "/b", "/a"])
  }

  @Test func transferEncodingAloneIs501() {
    #expect(Self.parse("POST / HTTP/1.1\r\n\(Self.host)Transfer-Encoding: chunked\r\n\r\n").status == 501)
  }

  @Test func contentLengthWithTransferEncodingIs400() {
    let text = "POST / HTTP/1.1\r\n\(Self.host)Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
    #expect(Self.parse(text).status == 400)
  }

  @Test(arguments: ["Content-Length: 3\r\nContent-Length: 3", "Content-Length: 3\r\nContent-Length: 4"])
  func severalContentLengthsAre400(_ lengths: String) {
    #expect(Self.parse("POST / HTTP/1.1\r\n\(Self.host)\(lengths)\r\n\r\nabcd").status == 400)
  }

  @Test(arguments: ["+3", "-3", "3 3", "0x3", "", "3,3", "³"])
  func aContentLengthNotAllDigitsIs400(_ value: String) {
    #expect(Self.parse("POST / HTTP/1.1\r\n\(Self.host)Content-Length: \(value)\r\n\r\nabc").status == 400)
  }

  @Test func anAbsurdContentLengthIs413BeforeTheBody() {
    let text = "POST / HTTP/1.1\r\n\(Self.host)Content-Length: 99999999999999999999\r\n\r\n"
    #expect(Self.parse(text).status == 413)
  }

  @Test func aBodyOverTheLimitIs413FromTheHeadAlone() {
    // No body byte is sent: the length alone decides.
    let text = "POST / HTTP/1.1\r\n\(Self.host)Content-Length: 1025\r\n\r\n"
    #expect(Self.parse(text, bodyLimit: 1024).status == 413)
    #expect(Self.parse(text, bodyLimit: 1025).status == nil)
  }

  /// The header-name rule would refuse a folded line too; the message shows this rule did.
  @Test func obsoleteLineFoldingIs400() {
    let error = Self.parse("GET / HTTP/1.1\r\n\(Self.host)X-A: one\r\n two\r\n\r\n").error
    #expect(error?.status == 400)
    #expect(error?.message.contains("folding") == true)
  }

  @Test(arguments: ["Content-Length : 3", "Host\t: x"])
  func whitespaceBeforeTheColonIs400(_ line: String) {
    #expect(Self.parse("POST / HTTP/1.1\r\n\(Self.host)\(line)\r\n\r\nabc").status == 400)
  }

  @Test func aBareCRIs400() {
    let error = Self.parse("GET / HTTP/1.1\r\n\(Self.host)X-A: a\rb\r\n\r\n").error
    #expect(error?.status == 400)
    #expect(error?.message.contains("bare CR") == true)
  }

  @Test func aBareLFIs400() {
    #expect(Self.parse("GET / HTTP/1.1\n\(Self.host)\r\n").status == 400)
  }

  @Test func aNULIs400EvenBeforeTheHeadEnds() {
    #expect(Self.parse(Array("GET / HTTP/1.1\r\nX-A: a".utf8) + [0]).status == 400)
  }

  @Test func aControlCharacterInAValueIs400() {
    #expect(Self.parse("GET / HTTP/1.1\r\n\(Self.host)X-A: a\u{7f}b\r\n\r\n").status == 400)
  }

  @Test func aHeadOverItsLimitIs431WithoutWaitingForItsEnd() {
    let filler = "X-Filler: " + String(repeating: "a", count: 200) + "\r\n"
    let text = "GET / HTTP/1.1\r\n\(Self.host)" + String(repeating: filler, count: 100)
    // No blank line: the limit alone must end it.
    #expect(Self.parse(text).status == 431)
  }

  @Test func moreThan64HeadersIs431() {
    let headers = (0..<64).map { "X-\($0): v\r\n" }.joined()
    #expect(Self.parse("GET / HTTP/1.1\r\n\(Self.host)\(headers)\r\n").status == 431)
    let within = (0..<63).map { "X-\($0): v\r\n" }.joined()
    #expect(Self.parse("GET / HTTP/1.1\r\n\(Self.host)\(within)\r\n").status == nil)
  }

  @Test func aRequestLineOverItsLimitIs414() {
    let text = "GET /" + String(repeating: "a", count: HTTPLimits.maxRequestLineBytes)
    #expect(Self.parse(text).status == 414)
  }

  @Test(arguments: [
    "GET /\r\n", "GET / HTTP/1.1 extra\r\n", "\u{16}\u{03}\u{01}\u{02}\u{00}", "GET  / HTTP/1.1\r\n",
  ])
  func garbageAndHTTP09RequestLinesAre400AtTheirEnd(_ line: String) {
    // The line alone, no headers and no blank line: refused without waiting for more.
    #expect(Self.parse(line).status == 400)
  }

  @Test func anAbsoluteFormTargetIs400() {
    #expect(Self.parse("GET http://example.test/ HTTP/1.1\r\n\(Self.host)\r\n").status == 400)
  }

  @Test func anotherHTTPVersionIs505() {
    #expect(Self.parse("GET / HTTP/2.0\r\n\(Self.host)\r\n").status == 505)
  }

  @Test func http11NeedsExactlyOneHost() {
    #expect(Self.parse("GET / HTTP/1.1\r\n\r\n").status == 400)
    #expect(Self.parse("GET / HTTP/1.1\r\n\(Self.host)\(Self.host)\r\n").status == 400)
  }

  @Test func http10IsAnsweredThenClosed() throws {
    let outcome = Self.parse("GET / HTTP/1.0\r\n\r\n")
    #expect(try #require(outcome.requests.first).1.keepAlive == false)
  }

  @Test func connectionCloseIsHonoured() throws {
    let outcome = Self.parse("GET / HTTP/1.1\r\n\(Self.host)Connection: Keep-Alive, Close\r\n\r\n")
    #expect(try #require(outcome.requests.first).1.keepAlive == false)
  }

  @Test func expect100ContinueIsReportedOnlyWithABody() throws {
    let withBody = Self.parse(
      "POST / HTTP/1.1\r\n\(Self.host)Expect: 100-continue\r\nContent-Length: 1\r\n\r\nx")
    #expect(try #require(withBody.requests.first).1.expectsContinue)
    let without = Self.parse("GET / HTTP/1.1\r\n\(Self.host)Expect: 100-continue\r\n\r\n")
    #expect(try #require(without.requests.first).1.expectsContinue == false)
    #expect(Self.parse("GET / HTTP/1.1\r\n\(Self.host)Expect: magic\r\n\r\n").status == 417)
  }

  @Test func theBodyWaitsForAdmission() throws {
    var parser = HTTPRequestParser()
    parser.append(Array("POST / HTTP/1.1\r\n\(Self.host)Content-Length: 3\r\n\r\nabc".utf8))
    guard case .head = try parser.next() else { Issue.record("expected the head first"); return }
    guard case .needMore = try parser.next() else { Issue.record("the body must wait"); return }
    #expect(parser.hasPartialRequest)
    try parser.admitBody(limit: 3)
    guard case .request(let request, _) = try parser.next() else {
      Issue.record("expected the request"); return
    }
    #expect(request.body == Array("abc".utf8))
    #expect(!parser.hasPartialRequest)
  }

  @Test func afterAnErrorEveryCallThrowsIt() {
    var parser = HTTPRequestParser()
    parser.append(Array("GET /\r\n".utf8))
    #expect(throws: HTTPTransportError.self) { try parser.next() }
    parser.append(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
    #expect(throws: HTTPTransportError.self) { try parser.next() }
    #expect(parser.bufferedBytes == 0)
  }

  @Test func leadingEmptyLinesAreSkipped() {
    #expect(Self.parse("\r\n\r\nGET / HTTP/1.1\r\n\(Self.host)\r\n").requests.count == 1)
  }

  @Test func aHeadSplitAnywhereParsesTheSame() {
    let text = "POST /p?q HTTP/1.1\r\n\(Self.host)Content-Length: 2\r\nX-A:  spaced \r\n\r\nhi"
    let whole = Self.parse(text)
    let split = Self.parse(text, byteByByte: true)
    #expect(split.requests.count == 1)
    #expect(split.requests.first?.0.header("x-a") == "spaced")
    #expect(whole.requests.first?.0.headers.map(\.name) == split.requests.first?.0.headers.map(\.name))
  }
}
