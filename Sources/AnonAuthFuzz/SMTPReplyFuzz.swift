import AnonAuthNet

/// The SMTP client's reply parser (what a mail server, trusted by no one, answers), fed in
/// pieces sized by the first byte as sockets deliver them. Whatever it accepts is within
/// its bounds: a code of 200 to 599, at most `maxLines` lines of at most `maxLineBytes`.
enum SMTPReplyFuzz {
  static func run(_ data: [UInt8]) {
    guard let first = data.first else { return }
    let step = Int(first % 64) + 1
    var parser = SMTPReplyParser(maxLineBytes: 512, maxLines: 16)
    var index = 1
    while index < data.count {
      let end = min(data.count, index + step)
      parser.append(data[index..<end])
      index = end
      do {
        while let reply = try parser.next() {
          precondition((200...599).contains(reply.code), "a reply code out of range")
          precondition(!reply.lines.isEmpty && reply.lines.count <= 16, "a reply over its line bound")
          precondition(reply.lines.allSatisfy { $0.utf8.count <= 512 }, "a line over its bound")
          _ = reply.extensions
          _ = reply.summary
        }
      } catch {
        return
      }
    }
  }
}
