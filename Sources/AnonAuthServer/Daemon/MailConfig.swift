import AnonAuthNet
import AnonAuthService
import Foundation

/// How the daemon delivers email actions' mails, from `--smtp-url` and its companions.
/// Checked at start: a bad URL, a credentials file others can read or that does not hold
/// `USER:PASSWORD`, or an unreadable CA file stops the start.
public struct MailConfig: Sendable {
  public var smtpURL: SMTPURL?
  public var credentials: SMTPClient.Credentials?
  public var caFile: String?
  public var from: String
  /// Empty: derived (`Daemon`).
  public var actionURL: String
  public var retryBaseMs: Int64
  public var timeoutMs: Int

  init(_ values: [String: String], retryBaseMs: Int64, timeoutMs: Int) throws(ConfigError) {
    let urlText = values["smtp-url"] ?? ""
    if urlText.isEmpty {
      smtpURL = nil
    } else {
      do {
        smtpURL = try SMTPURL(urlText)
      } catch {
        throw ConfigError("--smtp-url: \(error.description)")
      }
    }
    if let path = values["smtp-credentials-file"], !path.isEmpty {
      guard smtpURL != nil else { throw ConfigError("--smtp-credentials-file needs --smtp-url") }
      try SecretFile.check(path, setting: "--smtp-credentials-file")
      guard let data = FileManager.default.contents(atPath: path) else {
        throw ConfigError("--smtp-credentials-file \(path): cannot read it")
      }
      guard let credentials = SMTPClient.Credentials(fileText: String(decoding: data, as: UTF8.self)) else {
        throw ConfigError("--smtp-credentials-file \(path): the first line must be USER:PASSWORD")
      }
      self.credentials = credentials
    } else {
      credentials = nil
    }
    caFile = values["smtp-ca-file"].flatMap { $0.isEmpty ? nil : $0 }
    if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
      throw ConfigError("--smtp-ca-file: cannot read \(caFile)")
    }
    from = values["smtp-from"] ?? ""
    // Only the shape: a local relay may well take `noreply@localhost`.
    guard let address = SenderAddress.address(of: from), address.contains("@"),
      !address.contains(where: { $0 == " " || $0 == "<" || $0 == ">" }), !from.contains(where: \.isNewline)
    else {
      throw ConfigError("--smtp-from: expected \"Name <address>\" or an address, got \"\(from)\"")
    }
    actionURL = values["email-action-url"] ?? ""
    guard actionURL.isEmpty || actionURL.hasPrefix("https://") || actionURL.hasPrefix("http://") else {
      throw ConfigError("--email-action-url: expected an http(s) URL")
    }
    self.retryBaseMs = retryBaseMs
    self.timeoutMs = timeoutMs
  }
}
