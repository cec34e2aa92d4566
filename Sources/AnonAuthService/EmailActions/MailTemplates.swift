/// The mails of the email actions: subject, plain text and HTML for each kind, with the
/// app's name and the link filled in. English only for now; the request's locale is
/// carried in the link's `lang` for the page that handles it.
public enum MailTemplates {
  /// The subject and the two bodies of one mail.
  public struct Mail: Sendable, Equatable {
    public var subject: String
    public var text: String
    public var html: String
  }

  public static func render(kind: OobKind, appName: String, email: String, newEmail: String, link: String)
    -> Mail
  {
    let (subject, lead, action): (String, String, String)
    switch kind {
    case .passwordReset:
      subject = "Reset your password for \(appName)"
      lead = "Follow this link to reset your \(appName) password for your \(email) account."
      action = "If you didn't ask to reset your password, you can ignore this email."
    case .verifyEmail:
      subject = "Verify your email for \(appName)"
      lead = "Follow this link to verify your email address."
      action = "If you didn't ask to verify this address, you can ignore this email."
    case .verifyAndChangeEmail:
      subject = "Verify your new email for \(appName)"
      lead =
        "Follow this link to verify \(newEmail) and make it the sign-in email of your \(appName) account."
      action = "If you didn't ask to change your email, you can ignore this email."
    case .emailSignIn:
      subject = "Sign in to \(appName) requested"
      lead =
        "We received a request to sign in to \(appName) using this email address. Follow this link to sign in."
      action = "If you did not request this link, you can safely ignore this email."
    }
    let text = "Hello,\n\n\(lead)\n\n\(link)\n\n\(action)\n\nThanks,\nYour \(appName) team\n"
    let html = """
      <p>Hello,</p>
      <p>\(escape(lead))</p>
      <p><a href="\(escape(link))">\(escape(link))</a></p>
      <p>\(escape(action))</p>
      <p>Thanks,<br>Your \(escape(appName)) team</p>
      """
    return Mail(subject: subject, text: text, html: html)
  }

  /// HTML text and attribute escaping.
  static func escape(_ text: String) -> String {
    var out = ""
    for c in text {
      switch c {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      default: out.append(c)
      }
    }
    return out
  }
}
