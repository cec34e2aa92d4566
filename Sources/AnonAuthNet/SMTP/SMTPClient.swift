import Foundation

/// Sends mail to one SMTP server: a new connection per mail, STARTTLS (required on
/// `smtp://` unless the server is on this machine) or implicit TLS (`smtps://`), the
/// server's certificate checked against the CAs (host name included), AUTH PLAIN or LOGIN
/// when credentials are set (never over plain text), PIPELINING of MAIL, RCPT and DATA
/// when offered, and one deadline for the whole exchange. Blocking: call it from a thread
/// of its own (`send` does, through its pool), never from the cooperative pool.
public final class SMTPClient: Sendable {
  /// A user name and password for AUTH.
  public struct Credentials: Sendable, Equatable {
    public var username: String
    public var password: String

    public init(username: String, password: String) {
      self.username = username
      self.password = password
    }

    /// A credentials file: `username:password` on its first line.
    public init?(fileText: String) {
      guard let line = fileText.split(whereSeparator: \.isNewline).first,
        let colon = line.firstIndex(of: ":"), colon != line.startIndex
      else { return nil }
      username = String(line[..<colon])
      password = String(line[line.index(after: colon)...])
    }
  }

  public let url: SMTPURL
  let credentials: Credentials?
  let context: TLSContext
  let heloName: String
  public let timeoutMs: Int
  private let pool: IOThreadPool

  /// - Parameters:
  ///   - caFile: PEM CAs the server's certificate must chain to; nil: the system's.
  ///   - heloName: the name this host gives in EHLO.
  /// - Throws: `OpenSSLError` when the CA file cannot be used.
  public init(
    url: SMTPURL, credentials: Credentials?, caFile: String?, heloName: String = "localhost",
    timeoutMs: Int = 30_000
  ) throws(OpenSSLError) {
    self.url = url
    self.credentials = credentials
    self.context = try TLSContext.client(caFile: caFile, applicationProtocol: "smtp")
    self.heloName = heloName.isEmpty ? "localhost" : heloName
    self.timeoutMs = timeoutMs
    pool = IOThreadPool(threads: 1, maxQueued: 64, name: "anonauth-smtp")
  }

  /// Sends one mail on the client's thread.
  public func send(_ message: SMTPMessage) async throws(SMTPError) {
    let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
    let result: Result<Void, SMTPError> = await withCheckedContinuation { continuation in
      let accepted = pool.submit(
        deadline: deadline,
        run: {
          continuation.resume(
            returning: Result { () throws(SMTPError) in try self.sendNow(message, deadline: deadline) })
        },
        expire: {
          continuation.resume(returning: .failure(.temporary("the mail waited too long for the SMTP thread")))
        })
      if !accepted {
        continuation.resume(returning: .failure(.temporary("too many mails waiting for the SMTP thread")))
      }
    }
    try result.get()
  }

  public func shutdown() { pool.shutdown() }

  /// The whole exchange, blocking.
  func sendNow(_ message: SMTPMessage, deadline: ContinuousClock.Instant) throws(SMTPError) {
    let connection = try SMTPConnection(host: url.host, port: url.port, deadline: deadline)
    if url.security == .implicitTLS { try connection.startTLS(context) }
    try expect(connection.readReply(), 220, "greeting")
    var ehlo = try command(connection, "EHLO \(heloName)", 250)
    if url.security == .startTLS {
      if ehlo.extensions["STARTTLS"] != nil {
        _ = try command(connection, "STARTTLS", 220)
        try connection.startTLS(context)
        ehlo = try command(connection, "EHLO \(heloName)", 250)
      } else if !url.isLoopback {
        throw .temporary("\(url.host) does not offer STARTTLS; refusing to send mail in plain text")
      }
    }
    if let credentials {
      guard connection.isTLS || url.isLoopback else {
        throw .temporary("refusing to send SMTP credentials without TLS")
      }
      try authenticate(connection, credentials, offered: ehlo.extensions["AUTH"] ?? [])
    }
    let from = SMTPMessage.address(of: message.from)
    let to = SMTPMessage.address(of: message.to)
    guard
      ![from, to].contains(where: {
        $0.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "<" || $0 == ">" })
      })
    else { throw .permanent("an address has characters SMTP cannot carry") }
    let envelope = ["MAIL FROM:<\(from)>", "RCPT TO:<\(to)>", "DATA"]
    if ehlo.extensions["PIPELINING"] != nil {
      try connection.write(Array(envelope.map { $0 + "\r\n" }.joined().utf8))
      try expect(connection.readReply(), 250, "MAIL FROM")
      try expect(connection.readReply(), 250, "RCPT TO", alsoOK: 251)
      try expect(connection.readReply(), 354, "DATA")
    } else {
      _ = try command(connection, envelope[0], 250)
      _ = try command(connection, envelope[1], 250, alsoOK: 251)
      _ = try command(connection, envelope[2], 354)
    }
    let messageID = UUID().uuidString.lowercased()
    try connection.write(
      message.data(messageID: messageID, date: Date(), boundary: "=_anonauth_\(messageID)"))
    try expect(connection.readReply(), 250, "end of DATA")
    // The mail is accepted; QUIT is a courtesy whose failure changes nothing.
    try? connection.write(Array("QUIT\r\n".utf8))
    _ = try? connection.readReply()
  }

  private func authenticate(_ connection: SMTPConnection, _ credentials: Credentials, offered: [String])
    throws(SMTPError)
  {
    if offered.contains("PLAIN") {
      let token = Data(([0] + Array(credentials.username.utf8) + [0] + Array(credentials.password.utf8)))
        .base64EncodedString()
      _ = try command(connection, "AUTH PLAIN \(token)", 235, what: "AUTH PLAIN")
    } else if offered.contains("LOGIN") {
      _ = try command(connection, "AUTH LOGIN", 334)
      _ = try command(
        connection, Data(credentials.username.utf8).base64EncodedString(), 334, what: "AUTH LOGIN user")
      _ = try command(
        connection, Data(credentials.password.utf8).base64EncodedString(), 235, what: "AUTH LOGIN password")
    } else {
      throw .temporary("\(url.host) offers neither AUTH PLAIN nor AUTH LOGIN")
    }
  }

  /// Sends one command line and checks its reply. `what` names it in errors (AUTH lines
  /// carry secrets and are never quoted).
  private func command(
    _ connection: SMTPConnection, _ line: String, _ code: Int, alsoOK: Int? = nil, what: String? = nil
  ) throws(SMTPError) -> SMTPReply {
    try connection.write(Array((line + "\r\n").utf8))
    let reply = try connection.readReply()
    try expect(reply, code, what ?? String(line.prefix(while: { $0 != ":" && $0 != " " })), alsoOK: alsoOK)
    return reply
  }

  private func expect(_ reply: SMTPReply, _ code: Int, _ what: String, alsoOK: Int? = nil) throws(SMTPError) {
    if reply.code == code || reply.code == alsoOK { return }
    let message = "\(url.host) answered \(what) with \(reply.summary)"
    throw reply.code >= 500 ? .permanent(message) : .temporary(message)
  }
}
