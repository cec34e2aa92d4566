import AnonAuthNet
import AnonAuthService
import AnonAuthStore

/// The mail worker's transport to an SMTP server (`--smtp-url`).
struct SMTPMailTransport: MailTransport {
  let client: SMTPClient

  func deliver(_ mail: OutboxMail, _ admitted: Admitted) async throws(MailDeliveryError) {
    do throws(SMTPError) {
      try await client.send(
        SMTPMessage(
          from: mail.sender, to: mail.recipient, subject: mail.subject, text: mail.textBody,
          html: mail.htmlBody))
    } catch {
      throw MailDeliveryError(permanent: error.isPermanent, error.description)
    }
  }
}
