import AnonAuthWire
import Testing

@testable import AnonAuthService

/// A project's own mail texts: checked when set, chosen by kind and language, filled with
/// Firebase's placeholders (escaped in HTML).
@Suite struct ProjectTemplateTests {
  static let templates = [
    EmailTemplate(
      requestType: "PASSWORD_RESET", language: "", subject: "Reset %APP_NAME%", text: "Go: %LINK% (%EMAIL%)",
      html: #"<p><a href="%LINK%">%APP_NAME%</a></p>"#),
    EmailTemplate(requestType: "PASSWORD_RESET", language: "de", subject: "Neu", text: "Hier: %LINK%"),
  ]

  @Test func chosenByLanguageThenForEveryLanguage() throws {
    let json = ProjectTemplates.encode(Self.templates)
    #expect(ProjectTemplates.decode(json) == Self.templates)
    let german = try #require(
      ProjectTemplates.render(
        json, kind: .passwordReset, locale: "de-CH", appName: "A", email: "e@x.com", newEmail: "", link: "L"))
    #expect(german.subject == "Neu" && german.text == "Hier: L" && german.html.isEmpty)
    let other = try #require(
      ProjectTemplates.render(
        json, kind: .passwordReset, locale: "fr", appName: "<A&B>", email: "e@x.com", newEmail: "",
        link: "https://x/?a=1&b=2"))
    #expect(other.subject == "Reset <A&B>")
    #expect(other.text == "Go: https://x/?a=1&b=2 (e@x.com)")
    #expect(other.html == #"<p><a href="https://x/?a=1&amp;b=2">&lt;A&amp;B&gt;</a></p>"#)
    #expect(
      ProjectTemplates.render(
        json, kind: .verifyEmail, locale: "", appName: "A", email: "e", newEmail: "", link: "L") == nil)
  }

  @Test(arguments: [
    EmailTemplate(requestType: "NOPE", subject: "s", text: "%LINK%"),
    EmailTemplate(requestType: "VERIFY_EMAIL", language: "DE", subject: "s", text: "%LINK%"),
    EmailTemplate(requestType: "VERIFY_EMAIL", subject: "two\nlines", text: "%LINK%"),
    EmailTemplate(requestType: "VERIFY_EMAIL", subject: "s", text: "no link"),
    EmailTemplate(requestType: "VERIFY_EMAIL", subject: "s", text: "%LINK%", html: "<p>no link</p>"),
  ])
  func badTemplatesAreRefused(_ template: EmailTemplate) {
    #expect(throws: RPCError.self) { try ProjectTemplates.validate([template]) }
  }

  @Test func twoForTheSameKindAndLanguageAreRefused() {
    let one = EmailTemplate(requestType: "VERIFY_EMAIL", subject: "s", text: "%LINK%")
    #expect(throws: RPCError.self) { try ProjectTemplates.validate([one, one]) }
    #expect(throws: Never.self) { try ProjectTemplates.validate(Self.templates) }
  }
}
