import AnonAuthNet
import Testing

/// The SMTP reply parser: RFC 5321 replies, whole or in pieces, and every malformed or
/// oversized reply refused rather than buffered.
@Suite struct SMTPReplyParserTests {
  func parse(_ text: String, parser: SMTPReplyParser = SMTPReplyParser()) throws -> [SMTPReply] {
    var parser = parser
    parser.append(Array(text.utf8))
    var out: [SMTPReply] = []
    while let reply = try parser.next() { out.append(reply) }
    return out
  }

  @Test func aOneLineReply() throws {
    let expected = [SMTPReply(code: 220, lines: ["mail.example.com ESMTP ready"])]
    #expect(try parse("220 mail.example.com ESMTP ready\r\n") == expected)
  }

  @Test func aMultiLineEHLOReplyAndItsExtensions() throws {
    let replies = try parse(
      "250-mail.example.com\r\n250-PIPELINING\r\n250-AUTH PLAIN login\r\n250-SIZE 1000\r\n250 STARTTLS\r\n")
    #expect(replies.count == 1)
    let reply = try #require(replies.first)
    #expect(reply.code == 250 && reply.lines.count == 5)
    #expect(reply.extensions["AUTH"] == ["PLAIN", "LOGIN"])
    #expect(reply.extensions["STARTTLS"] == [])
    #expect(reply.extensions["PIPELINING"] == [])
    #expect(reply.extensions["MAIL.EXAMPLE.COM"] == nil)
  }

  @Test func bytesArriveInPiecesAndSeveralRepliesAtOnce() throws {
    var parser = SMTPReplyParser()
    let text = Array("250 2.1.0 ok\r\n250-a\n250 b\r\n354 go ahead\r\n".utf8)
    var replies: [SMTPReply] = []
    for byte in text {
      parser.append([byte])
      while let reply = try parser.next() { replies.append(reply) }
    }
    #expect(replies.map(\.code) == [250, 250, 354])
    #expect(replies[1].lines == ["a", "b"])
  }

  @Test func aBareCodeIsAReply() throws {
    #expect(try parse("221\r\n") == [SMTPReply(code: 221, lines: [""])])
  }

  @Test func transientAndPermanentCodes() throws {
    let replies = try parse("451 4.3.0 later\r\n550 5.1.1 no such user\r\n")
    #expect(replies[0].isTransient && !replies[0].isPositive)
    #expect(!replies[1].isTransient && !replies[1].isPositive)
    #expect(replies[1].summary == "550 5.1.1 no such user")
  }

  @Test(arguments: [
    "hello\r\n", "25 short\r\n", "2x0 letters\r\n", "650 out of range\r\n", "250_underscore\r\n",
    "250-first\r\n251 other code\r\n",
  ])
  func malformedRepliesAreRefused(_ text: String) {
    #expect(throws: SMTPReplyParser.Failure.self) { try parse(text) }
  }

  @Test func aLineOverTheLimitIsRefusedEvenBeforeItsEnd() {
    let parser = SMTPReplyParser(maxLineBytes: 64, maxLines: 4)
    #expect(throws: SMTPReplyParser.Failure.lineTooLong) {
      try parse("250 " + String(repeating: "x", count: 100), parser: parser)
    }
    #expect(throws: SMTPReplyParser.Failure.lineTooLong) {
      try parse("250 " + String(repeating: "x", count: 100) + "\r\n", parser: parser)
    }
  }

  @Test func aReplyOverTheLineLimitIsRefused() {
    let parser = SMTPReplyParser(maxLineBytes: 64, maxLines: 4)
    #expect(throws: SMTPReplyParser.Failure.tooManyLines) {
      try parse(String(repeating: "250-x\r\n", count: 5) + "250 end\r\n", parser: parser)
    }
  }

  @Test func textIsUTF8OrASCIIWithinTheLineBound() throws {
    #expect(try parse("250 caf\u{e9}\r\n")[0].lines == ["caf\u{e9}"])
    var parser = SMTPReplyParser(maxLineBytes: 16, maxLines: 4)
    parser.append([0x32, 0x35, 0x30, 0x20] + [UInt8](repeating: 0xFF, count: 12) + [0x0D, 0x0A])
    let reply = try #require(try parser.next())
    #expect(reply.lines == [String(repeating: "?", count: 12)])
  }

  @Test func incompleteInputWaits() throws {
    #expect(try parse("250-first\r\n250 sec").isEmpty)
  }
}

/// `--smtp-url`.
@Suite struct SMTPURLTests {
  @Test func schemesAndDefaultPorts() throws {
    let starttls = try SMTPURL("smtp://mail.example.com")
    #expect(starttls.security == .startTLS && starttls.port == 587 && starttls.host == "mail.example.com")
    let implicit = try SMTPURL("smtps://mail.example.com:2465")
    #expect(implicit.security == .implicitTLS && implicit.port == 2465)
    let v6 = try SMTPURL("smtp://[::1]:25")
    #expect(v6.host == "::1" && v6.port == 25 && v6.isLoopback)
    #expect(try SMTPURL("smtp://127.0.0.1:2525/").isLoopback)
    #expect(try !SMTPURL("smtp://mail.example.com").isLoopback)
    #expect(implicit.description == "smtps://mail.example.com:2465")
  }

  @Test(arguments: [
    "http://mail.example.com", "smtp://", "smtp://user:pw@mail.example.com", "smtp://mail.example.com:0",
    "smtp://mail.example.com:99999", "smtp://mail.example.com/path", "smtp://[::1",
    "smtp://mail.example.com?x=1",
  ])
  func badURLsAreRefused(_ text: String) {
    #expect(throws: SMTPURLError.self) { try SMTPURL(text) }
  }
}

/// The mail's DATA: headers safe from injection, bodies in base64.
@Suite struct SMTPMessageTests {
  @Test func headersCannotBeInjectedAndNonASCIIIsEncoded() {
    let message = SMTPMessage(
      from: "App <no-reply@example.com>", to: "ann@example.com\r\nBcc: eve@example.com",
      subject: "Réinitialiser", text: ".leading dot\nline", html: "<p>x</p>")
    let bytes = message.data(messageID: "id1", date: .init(timeIntervalSince1970: 0), boundary: "B")
    let data = String(decoding: bytes, as: UTF8.self)
    #expect(data.contains("To: ann@example.comBcc: eve@example.com\r\n"))
    #expect(!data.contains("\r\nBcc:"))
    #expect(data.contains("Subject: =?UTF-8?B?UsOpaW5pdGlhbGlzZXI=?=\r\n"))
    #expect(data.contains("Message-ID: <id1@example.com>\r\n"))
    #expect(data.contains("Date: Thu, 01 Jan 1970 00:00:00 +0000\r\n"))
    #expect(data.hasSuffix("--B--\r\n.\r\n"))
    for line in data.split(separator: "\r\n") { #expect(line.utf8.count <= 998) }
    #expect(SMTPMessage.address(of: "App <no-reply@example.com>") == "no-reply@example.com")
  }

  @Test func credentialsFileTakesTheFirstColon() {
    let credentials = SMTPClient.Credentials(fileText: "user:pa:ss\nignored")
    #expect(credentials == .init(username: "user", password: "pa:ss"))
    #expect(SMTPClient.Credentials(fileText: ":nouser") == nil)
    #expect(SMTPClient.Credentials(fileText: "") == nil)
  }
}
