import AnonAuthCrypto
import AnonAuthWire
import Foundation

/// A project's own mail texts (`ProjectConfig.email_templates`): kept as JSON in the
/// store, checked when set, and filled with Firebase's placeholders when a mail is made.
enum ProjectTemplates {
  static let maxTemplates = 20
  static let maxBodyBytes = 64 * 1024

  static func encode(_ templates: [EmailTemplate]) -> String {
    JSONValue.array(
      templates.map { t in
        .object([
          "request_type": .string(t.requestType), "language": .string(t.language),
          "subject": .string(t.subject),
          "text": .string(t.text), "html": .string(t.html),
        ])
      }
    ).jsonText
  }

  static func decode(_ json: String) -> [EmailTemplate] {
    guard let list = JSONValue(jsonBytes: Array(json.utf8))?.arrayValue else { return [] }
    return list.compactMap { value in
      guard let o = value.objectValue else { return nil }
      return EmailTemplate(
        requestType: o["request_type"]?.stringValue ?? "", language: o["language"]?.stringValue ?? "",
        subject: o["subject"]?.stringValue ?? "", text: o["text"]?.stringValue ?? "",
        html: o["html"]?.stringValue ?? "")
    }
  }

  /// - Throws: `INVALID_CONFIG` naming the first bad template.
  static func validate(_ templates: [EmailTemplate]) throws(RPCError) {
    guard templates.count <= maxTemplates else {
      throw RPCError(.invalidConfig, "email_templates: at most \(maxTemplates)")
    }
    var seen: Set<String> = []
    for (index, t) in templates.enumerated() {
      let name = "email_templates[\(index)]"
      guard OobKind(rawValue: t.requestType) != nil else {
        throw RPCError(
          .invalidConfig,
          "\(name): request_type must be PASSWORD_RESET, VERIFY_EMAIL, VERIFY_AND_CHANGE_EMAIL or EMAIL_SIGNIN"
        )
      }
      guard
        t.language.isEmpty
          || (t.language.count <= 8 && t.language.allSatisfy { $0.isASCII && $0.isLowercase })
      else { throw RPCError(.invalidConfig, "\(name): language must be a lowercase primary subtag (\"de\")") }
      guard seen.insert("\(t.requestType)/\(t.language)").inserted else {
        throw RPCError(.invalidConfig, "\(name): a second template for \(t.requestType) \(t.language)")
      }
      guard !t.subject.isEmpty, t.subject.utf8.count <= 256, !ProviderText.hasControl(t.subject) else {
        throw RPCError(.invalidConfig, "\(name): subject must be 1 to 256 bytes on one line")
      }
      guard t.text.contains("%LINK%"), t.text.utf8.count <= maxBodyBytes else {
        throw RPCError(.invalidConfig, "\(name): text must hold %LINK% and be at most 64 KiB")
      }
      guard t.html.isEmpty || (t.html.contains("%LINK%") && t.html.utf8.count <= maxBodyBytes) else {
        throw RPCError(.invalidConfig, "\(name): html must be empty or hold %LINK% and be at most 64 KiB")
      }
    }
  }

  /// The project's template for `kind` in the language of `locale`, else its template
  /// for every language, filled in; nil when the project has neither.
  static func render(
    _ json: String, kind: OobKind, locale: String, appName: String, email: String, newEmail: String,
    link: String
  ) -> MailTemplates.Mail? {
    guard json != "[]" else { return nil }
    let templates = decode(json).filter { $0.requestType == kind.rawValue }
    let language =
      locale.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
    guard
      let t = templates.first(where: { $0.language == language && !language.isEmpty })
        ?? templates.first(where: { $0.language.isEmpty })
    else { return nil }
    let values = ["%LINK%": link, "%APP_NAME%": appName, "%EMAIL%": email, "%NEW_EMAIL%": newEmail]
    func fill(_ text: String, escape: Bool) -> String {
      var out = text
      for (placeholder, value) in values {
        out = out.replacingOccurrences(of: placeholder, with: escape ? MailTemplates.escape(value) : value)
      }
      return out
    }
    let subject = fill(t.subject, escape: false).filter { !$0.isNewline }
    return MailTemplates.Mail(
      subject: subject, text: fill(t.text, escape: false), html: fill(t.html, escape: true))
  }
}
