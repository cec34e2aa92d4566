import AnonAuthService
import AnonAuthStore
import Foundation

/// --dev without `--smtp-url`: each mail becomes a file in `DATA_DIR/mail` (0600: it
/// holds a working code) and its link a log line, so `make run` needs no mail server.
struct DirectoryMailTransport: MailTransport {
  let directory: String
  let logger: Logger

  func deliver(_ mail: OutboxMail, _ admitted: Admitted) async throws(MailDeliveryError) {
    let fm = FileManager.default
    do {
      try fm.createDirectory(
        atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      let path = "\(directory)/\(mail.createdAtMs)-\(mail.id).eml"
      let text =
        "From: \(mail.sender)\nTo: \(mail.recipient)\nSubject: \(mail.subject)\n\n\(mail.textBody)\n"
      guard fm.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
      else {
        throw MailDeliveryError(permanent: false, "cannot write \(path)")
      }
      logger.info(
        "dev mail written",
        [
          "project_id": .string(mail.projectID), "to": .string(mail.recipient),
          "request_type": .string(mail.requestType), "link": .string(mail.link), "file": .string(path),
        ])
    } catch let error as MailDeliveryError {
      throw error
    } catch {
      throw MailDeliveryError(permanent: false, "cannot write the mail: \(error)")
    }
  }
}
