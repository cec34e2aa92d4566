import AnonAuthCrypto
import AnonAuthStore
import Foundation

/// The parts of an outbox mail that carry its code (the text and HTML bodies and the
/// link) are kept in the store sealed with the master key (AES-256-GCM, the project and
/// recipient as associated data), as the other secrets are: a copy of the store, or a
/// backup, does not hand out working reset links while their mails wait to be sent.
/// The worker opens them just before it sends.
enum OutboxSeal {
  static let prefix = "sealed:v1:"

  static func seal(_ mail: OutboxMail, key: [UInt8]) throws(CryptoError) -> OutboxMail {
    try mapCodeParts(mail) { (text, context) throws(CryptoError) in try seal(text, key: key, context: context)
    }
  }

  static func open(_ mail: OutboxMail, key: [UInt8]) throws(CryptoError) -> OutboxMail {
    try mapCodeParts(mail) { (text, context) throws(CryptoError) in try open(text, key: key, context: context)
    }
  }

  /// `mail` with the parts that carry its code (text, HTML, link) passed through
  /// `transform`, each bound to the mail's project and recipient.
  private static func mapCodeParts(
    _ mail: OutboxMail, _ transform: (String, [UInt8]) throws(CryptoError) -> String
  ) throws(CryptoError) -> OutboxMail {
    var changed = mail
    let context = associatedData(mail)
    changed.textBody = try transform(mail.textBody, context)
    changed.htmlBody = try transform(mail.htmlBody, context)
    changed.link = try transform(mail.link, context)
    return changed
  }

  private static func associatedData(_ mail: OutboxMail) -> [UInt8] {
    Array("mail_outbox/\(mail.projectID)/\(mail.recipient)".utf8)
  }

  private static func seal(_ text: String, key: [UInt8], context: [UInt8]) throws(CryptoError) -> String {
    let sealed = try AESGCM.seal(Array(text.utf8), key: key, associatedData: context)
    return prefix + Data(sealed).base64EncodedString()
  }

  private static func open(_ text: String, key: [UInt8], context: [UInt8]) throws(CryptoError) -> String {
    guard text.hasPrefix(prefix), let data = Data(base64Encoded: String(text.dropFirst(prefix.count))) else {
      throw CryptoError("mail outbox", reason: "a mail that is not sealed")
    }
    let opened = try AESGCM.open(Array(data), key: key, associatedData: context)
    return String(decoding: opened, as: UTF8.self)
  }
}
