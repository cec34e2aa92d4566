import Foundation

/// The mails of the email actions: subject, plain text and HTML for each kind, with the
/// app's name and the link filled in, in the language of the request's locale
/// (`X-Firebase-Locale`, as Firebase picks its templates) when one is written here
/// (English, German, French, Spanish), else in English.
public enum MailTemplates {
  /// The subject and the two bodies of one mail.
  public struct Mail: Sendable, Equatable {
    public var subject: String
    public var text: String
    public var html: String
  }

  /// The words of one mail: subject, the sentence before the link, the one after it,
  /// and the greeting and the closing.
  struct Words {
    var subject: String
    var lead: String
    var action: String
    var hello: String
    var thanks: String
  }

  /// The languages written here, by primary language subtag.
  public static let languages = ["en", "de", "fr", "es"]

  /// The language of `locale` ("de", "de-AT", "de_DE") when it is written here, else "en".
  public static func language(_ locale: String) -> String {
    let primary = locale.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
    return languages.contains(primary) ? primary : "en"
  }

  public static func render(
    kind: OobKind, appName: String, email: String, newEmail: String, link: String, locale: String = ""
  ) -> Mail {
    let w = words(kind, language: language(locale), app: appName, email: email, newEmail: newEmail)
    let text = "\(w.hello)\n\n\(w.lead)\n\n\(link)\n\n\(w.action)\n\n\(w.thanks)\n"
    let html = """
      <p>\(escape(w.hello))</p>
      <p>\(escape(w.lead))</p>
      <p><a href="\(escape(link))">\(escape(link))</a></p>
      <p>\(escape(w.action))</p>
      <p>\(escape(w.thanks).replacingOccurrences(of: "\n", with: "<br>"))</p>
      """
    return Mail(subject: w.subject, text: text, html: html)
  }

  static func words(_ kind: OobKind, language: String, app: String, email: String, newEmail: String) -> Words
  {
    switch language {
    case "de": german(kind, app: app, email: email, newEmail: newEmail)
    case "fr": french(kind, app: app, email: email, newEmail: newEmail)
    case "es": spanish(kind, app: app, email: email, newEmail: newEmail)
    default: english(kind, app: app, email: email, newEmail: newEmail)
    }
  }

  static func english(_ kind: OobKind, app: String, email: String, newEmail: String) -> Words {
    let (subject, lead, action): (String, String, String) =
      switch kind {
      case .passwordReset:
        (
          "Reset your password for \(app)",
          "Follow this link to reset your \(app) password for your \(email) account.",
          "If you didn't ask to reset your password, you can ignore this email."
        )
      case .verifyEmail:
        (
          "Verify your email for \(app)", "Follow this link to verify your email address.",
          "If you didn't ask to verify this address, you can ignore this email."
        )
      case .verifyAndChangeEmail:
        (
          "Verify your new email for \(app)",
          "Follow this link to verify \(newEmail) and make it the sign-in email of your \(app) account.",
          "If you didn't ask to change your email, you can ignore this email."
        )
      case .emailSignIn:
        (
          "Sign in to \(app) requested",
          "We received a request to sign in to \(app) using this email address. Follow this link to sign in.",
          "If you did not request this link, you can safely ignore this email."
        )
      }
    return Words(
      subject: subject, lead: lead, action: action, hello: "Hello,", thanks: "Thanks,\nYour \(app) team")
  }

  static func german(_ kind: OobKind, app: String, email: String, newEmail: String) -> Words {
    let (subject, lead, action): (String, String, String) =
      switch kind {
      case .passwordReset:
        (
          "Passwort für \(app) zurücksetzen",
          "Über diesen Link setzen Sie das \(app)-Passwort Ihres Kontos \(email) zurück.",
          "Wenn Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren."
        )
      case .verifyEmail:
        (
          "E-Mail-Adresse für \(app) bestätigen", "Über diesen Link bestätigen Sie Ihre E-Mail-Adresse.",
          "Wenn Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren."
        )
      case .verifyAndChangeEmail:
        (
          "Neue E-Mail-Adresse für \(app) bestätigen",
          "Über diesen Link bestätigen Sie \(newEmail) als neue Anmeldeadresse Ihres \(app)-Kontos.",
          "Wenn Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren."
        )
      case .emailSignIn:
        (
          "Anmeldung bei \(app)",
          "Für diese E-Mail-Adresse wurde eine Anmeldung bei \(app) angefordert. Über diesen Link melden Sie sich an.",
          "Wenn Sie das nicht angefordert haben, können Sie diese E-Mail ignorieren."
        )
      }
    return Words(subject: subject, lead: lead, action: action, hello: "Hallo,", thanks: "Ihr \(app)-Team")
  }

  static func french(_ kind: OobKind, app: String, email: String, newEmail: String) -> Words {
    let (subject, lead, action): (String, String, String) =
      switch kind {
      case .passwordReset:
        (
          "Réinitialisez votre mot de passe \(app)",
          "Suivez ce lien pour réinitialiser le mot de passe \(app) de votre compte \(email).",
          "Si vous n'avez rien demandé, vous pouvez ignorer cet e-mail."
        )
      case .verifyEmail:
        (
          "Validez votre adresse e-mail pour \(app)", "Suivez ce lien pour valider votre adresse e-mail.",
          "Si vous n'avez rien demandé, vous pouvez ignorer cet e-mail."
        )
      case .verifyAndChangeEmail:
        (
          "Validez votre nouvelle adresse e-mail pour \(app)",
          "Suivez ce lien pour valider \(newEmail) et en faire l'adresse de connexion de votre compte \(app).",
          "Si vous n'avez rien demandé, vous pouvez ignorer cet e-mail."
        )
      case .emailSignIn:
        (
          "Connexion à \(app)",
          "Une connexion à \(app) a été demandée avec cette adresse e-mail. Suivez ce lien pour vous connecter.",
          "Si vous n'avez rien demandé, vous pouvez ignorer cet e-mail."
        )
      }
    return Words(
      subject: subject, lead: lead, action: action, hello: "Bonjour,", thanks: "Merci,\nL'équipe \(app)")
  }

  static func spanish(_ kind: OobKind, app: String, email: String, newEmail: String) -> Words {
    let (subject, lead, action): (String, String, String) =
      switch kind {
      case .passwordReset:
        (
          "Restablece tu contraseña de \(app)",
          "Sigue este enlace para restablecer la contraseña de \(app) de tu cuenta \(email).",
          "Si no lo has solicitado, puedes ignorar este correo."
        )
      case .verifyEmail:
        (
          "Verifica tu correo electrónico para \(app)",
          "Sigue este enlace para verificar tu dirección de correo electrónico.",
          "Si no lo has solicitado, puedes ignorar este correo."
        )
      case .verifyAndChangeEmail:
        (
          "Verifica tu nuevo correo electrónico para \(app)",
          "Sigue este enlace para verificar \(newEmail) y usarlo para iniciar sesión en tu cuenta de \(app).",
          "Si no lo has solicitado, puedes ignorar este correo."
        )
      case .emailSignIn:
        (
          "Inicio de sesión en \(app)",
          "Se ha solicitado iniciar sesión en \(app) con esta dirección de correo. Sigue este enlace para iniciar sesión.",
          "Si no lo has solicitado, puedes ignorar este correo."
        )
      }
    return Words(
      subject: subject, lead: lead, action: action, hello: "Hola,", thanks: "Gracias,\nEl equipo de \(app)")
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
