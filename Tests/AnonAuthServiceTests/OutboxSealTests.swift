import AnonAuthStore
import Testing

@testable import AnonAuthService

/// What the outbox keeps of a mail that carries a code: sealed with the master key, bound
/// to its project and recipient, opened only with them.
@Suite struct OutboxSealTests {
  static let key = [UInt8](repeating: 7, count: 32)
  static let mail = OutboxMail(
    projectID: "p", recipient: "a@example.com", sender: "no-reply@example.com", subject: "Reset",
    textBody: "Reset with https://app/__/auth/action?oobCode=SECRET", htmlBody: "<a href=\"…SECRET\">",
    requestType: "PASSWORD_RESET", link: "https://app/__/auth/action?oobCode=SECRET", createdAtMs: 1)

  @Test func theCodeIsNotInTheStoredMailAndOpensBackWhole() throws {
    let sealed = try OutboxSeal.seal(Self.mail, key: Self.key)
    for field in [sealed.textBody, sealed.htmlBody, sealed.link] {
      #expect(!field.contains("SECRET"))
      #expect(field.hasPrefix(OutboxSeal.prefix))
    }
    #expect(sealed.subject == Self.mail.subject && sealed.recipient == Self.mail.recipient)
    #expect(try OutboxSeal.open(sealed, key: Self.key) == Self.mail)
  }

  @Test func anotherKeyOrRecipientOrAPlainMailDoesNotOpen() throws {
    let sealed = try OutboxSeal.seal(Self.mail, key: Self.key)
    #expect(throws: (any Error).self) { try OutboxSeal.open(sealed, key: [UInt8](repeating: 8, count: 32)) }
    var moved = sealed
    moved.recipient = "b@example.com"
    #expect(throws: (any Error).self) { try OutboxSeal.open(moved, key: Self.key) }
    #expect(throws: (any Error).self) { try OutboxSeal.open(Self.mail, key: Self.key) }
  }
}
