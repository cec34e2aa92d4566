import AnonAuthService
import AnonAuthWire
import Testing

/// The settable fields of ProjectConfig come from Protos/ (`// settable`, generated into
/// `ProjectConfigField`): UpdateProjectConfig takes each one alone and changes only it.
@Suite struct SettableFieldTests {
  /// A valid value, other than the new project's, for each field; the switch has no
  /// default, so a field marked settable later needs a case here too.
  static func change(_ field: ProjectConfigField, _ config: inout ProjectConfig) {
    switch field {
    case .anonymousEnabled: config.anonymousEnabled.toggle()
    case .emailPasswordEnabled: config.emailPasswordEnabled.toggle()
    case .idps: config.idps = [IdpConfig(providerId: "google.com", enabled: true, clientId: "web-client")]
    case .autoCleanupEnabled: config.autoCleanupEnabled.toggle()
    case .signUpQuotaPerHour: config.signUpQuotaPerHour = 7
    case .idTokenTtlSeconds: config.idTokenTtlSeconds = 900
    case .passwordMinLength: config.passwordMinLength = 12
    case .firebaseProjectId: config.firebaseProjectId = "my-fb"
    case .firebaseCertsJson: config.firebaseCertsJson = "{}"
    case .firebaseCertsUrl: config.firebaseCertsUrl = "https://certs.test/securetoken"
    case .firebaseCreateUnknownUsers: config.firebaseCreateUnknownUsers.toggle()
    case .corsOrigins:
      config.corsOrigins =
        config.corsOrigins.isEmpty ? ["https://app.example.com", "http://localhost:5173"] : []
    case .authorizedDomains:
      let isDefault = config.authorizedDomains == ["localhost"]
      config.authorizedDomains = isDefault ? ["app.example.com"] : ["localhost"]
    case .emailEnumerationProtectionDisabled: config.emailEnumerationProtectionDisabled.toggle()
    case .emailSender:
      config.emailSender = config.emailSender.isEmpty ? "App <no-reply@example.com>" : ""
    case .emailAppName: config.emailAppName = config.emailAppName.isEmpty ? "My App" : ""
    case .emailTemplates:
      config.emailTemplates =
        config.emailTemplates.isEmpty
        ? [EmailTemplate(requestType: "PASSWORD_RESET", language: "de", subject: "S", text: "T %LINK%")] : []
    }
  }

  @Test(
    "UpdateProjectConfig sets every settable field by its proto name, and nothing else",
    arguments: ProjectConfigField.allCases)
  func everySettableFieldIsSet(field: ProjectConfigField) async throws {
    try await ServiceHarness.with { h in
      let before = try h.config()
      var wanted = before
      Self.change(field, &wanted)
      #expect(wanted != before)
      // Every other field changed too, to show that the mask alone decides.
      var sent = wanted
      for other in ProjectConfigField.allCases where other != field { Self.change(other, &sent) }
      let after = try await h.updateConfig(sent, mask: [field.rawValue])
      var expected = wanted
      // Turning clean-up on stamps when; the rest is what was sent for this one field.
      expected.autoCleanupEnabledAtMs = after.autoCleanupEnabledAtMs
      #expect(after == expected)
      #expect(try h.config() == after)
    }
  }
}
