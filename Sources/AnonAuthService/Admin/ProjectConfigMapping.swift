import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// ProjectConfig ⇄ ProjectRecord, and the rules `UpdateProjectConfig` checks.
enum ProjectConfigMapping {
  static func config(_ record: ProjectRecord, masterKey: [UInt8]) -> ProjectConfig {
    var config = ProjectConfig()
    config.projectId = record.projectID
    config.anonymousEnabled = record.anonymousEnabled
    config.emailPasswordEnabled = record.emailPasswordEnabled
    config.idps = IdpConfigCodec.decode(record.idpsJSON, masterKey: masterKey, withSecrets: false)
    config.autoCleanupEnabled = record.autoCleanupEnabled
    config.autoCleanupEnabledAtMs = record.autoCleanupEnabledAtMs
    config.signUpQuotaPerHour = UInt32(clamping: record.effectiveSignUpQuotaPerHour)
    config.idTokenTtlSeconds = UInt32(clamping: record.effectiveIDTokenTTLSeconds)
    config.passwordMinLength = UInt32(clamping: record.effectivePasswordMinLength)
    config.firebaseProjectId = record.firebaseProjectID
    config.firebaseCertsJson = record.firebaseCertsJSON
    config.firebaseCertsUrl = record.firebaseCertsURL
    config.firebaseCreateUnknownUsers = record.firebaseCreateUnknownUsers
    config.corsOrigins = record.corsOrigins
    config.authorizedDomains = record.authorizedDomains
    config.emailEnumerationProtectionDisabled = record.emailEnumerationProtectionDisabled
    config.emailSender = record.emailSender
    config.emailAppName = record.emailAppName
    config.emailTemplates = ProjectTemplates.decode(record.emailTemplatesJSON)
    return config
  }

  /// The record after applying `mask` from `config`; every named field validated.
  /// - Throws: `INVALID_CONFIG` naming the first bad field; nothing is applied then.
  static func apply(
    _ config: ProjectConfig, mask: [String], to record: ProjectRecord, nowMs: Int64, masterKey: [UInt8]
  ) throws(RPCError) -> ProjectRecord {
    guard !mask.isEmpty else { throw RPCError(.invalidConfig, "update_mask is empty") }
    var next = record
    for name in mask {
      // The settable fields are those Protos/ marks; the switch below must handle each.
      guard let field = ProjectConfigField(rawValue: name) else {
        throw RPCError(.invalidConfig, "\"\(name)\" is not a settable field of ProjectConfig")
      }
      switch field {
      case .anonymousEnabled: next.anonymousEnabled = config.anonymousEnabled
      case .emailPasswordEnabled: next.emailPasswordEnabled = config.emailPasswordEnabled
      case .autoCleanupEnabled:
        if config.autoCleanupEnabled && !record.autoCleanupEnabled { next.autoCleanupEnabledAtMs = nowMs }
        next.autoCleanupEnabled = config.autoCleanupEnabled
      case .signUpQuotaPerHour:
        guard config.signUpQuotaPerHour <= 1_000_000 else {
          throw RPCError(
            .invalidConfig, "sign_up_quota_per_hour must be at most 1000000 (0: the default, 100)")
        }
        next.signUpQuotaPerHour = Int64(config.signUpQuotaPerHour)
      case .idTokenTtlSeconds:
        let ttl = Int64(config.idTokenTtlSeconds)
        guard ttl == 0 || (300...TokenMinter.maxTTLSeconds).contains(ttl) else {
          throw RPCError(
            .invalidConfig,
            "id_token_ttl_seconds must be 300...\(TokenMinter.maxTTLSeconds) (0: the default, 3600)")
        }
        next.idTokenTTLSeconds = ttl
      case .passwordMinLength:
        let length = Int64(config.passwordMinLength)
        guard length == 0 || (6...Int64(PasswordLimits.maximumBytes)).contains(length) else {
          throw RPCError(
            .invalidConfig,
            "password_min_length must be 6...\(PasswordLimits.maximumBytes) (0: the default, 6)")
        }
        next.passwordMinLength = length
      case .firebaseProjectId:
        let id = config.firebaseProjectId
        // Firebase project ids: 6 to 30 of [a-z0-9-]; older ones may be shorter.
        guard
          id.isEmpty
            || (id.utf8.count <= 30
              && id.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") })
        else { throw RPCError(.invalidConfig, "firebase_project_id must be at most 30 of [a-z0-9-]") }
        next.firebaseProjectID = id
      case .firebaseCertsJson:
        guard config.firebaseCertsJson.utf8.count <= 64 * 1024 else {
          throw RPCError(.invalidConfig, "firebase_certs_json must be at most 64 KiB")
        }
        next.firebaseCertsJSON = config.firebaseCertsJson
      case .firebaseCertsUrl:
        let url = config.firebaseCertsUrl
        guard url.isEmpty || (url.hasPrefix("https://") && url.utf8.count <= 2048) else {
          throw RPCError(.invalidConfig, "firebase_certs_url must be https")
        }
        next.firebaseCertsURL = url
      case .firebaseCreateUnknownUsers:
        next.firebaseCreateUnknownUsers = config.firebaseCreateUnknownUsers
      case .corsOrigins:
        try CORSOrigin.validate(config.corsOrigins)
        next.corsOrigins = config.corsOrigins
      case .authorizedDomains:
        try EmailProjectSettings.validateDomains(config.authorizedDomains)
        next.authorizedDomains = config.authorizedDomains.map { $0.lowercased() }
      case .emailEnumerationProtectionDisabled:
        next.emailEnumerationProtectionDisabled = config.emailEnumerationProtectionDisabled
      case .emailSender:
        try EmailProjectSettings.validateSender(config.emailSender)
        next.emailSender = config.emailSender
      case .emailAppName:
        guard config.emailAppName.utf8.count <= 128, !ProviderText.hasControl(config.emailAppName) else {
          throw RPCError(
            .invalidConfig, "email_app_name must be at most 128 bytes without control characters")
        }
        next.emailAppName = config.emailAppName
      case .emailTemplates:
        try ProjectTemplates.validate(config.emailTemplates)
        next.emailTemplatesJSON = ProjectTemplates.encode(config.emailTemplates)
      case .idps:
        try validate(config.idps)
        // A secret not sent again is kept: GetProjectConfig never returns it.
        let old = IdpConfigCodec.decode(record.idpsJSON, masterKey: masterKey, withSecrets: true)
        let merged = config.idps.map { idp -> IdpConfig in
          var idp = idp
          if let previous = old.first(where: { $0.providerId == idp.providerId }) {
            if idp.clientSecret.isEmpty { idp.clientSecret = previous.clientSecret }
            if idp.privateKey.isEmpty { idp.privateKey = previous.privateKey }
          }
          return idp
        }
        do {
          next.idpsJSON = try IdpConfigCodec.encode(merged, masterKey: masterKey)
        } catch {
          throw RPCError(.internalError, "sealing the provider secret failed")
        }
      }
    }
    return next
  }

  static func validate(_ idps: [IdpConfig]) throws(RPCError) {
    var seen: Set<String> = []
    for idp in idps {
      let id = idp.providerId
      let known =
        id == "google.com" || id == "facebook.com" || id == "apple.com"
        || (id.hasPrefix("oidc.") && id.count > 5)
      guard known, id.utf8.count <= 64,
        id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
      else {
        throw RPCError(
          .invalidConfig, "idps: provider_id must be google.com, apple.com, facebook.com or oidc.<name>")
      }
      guard seen.insert(id).inserted else { throw RPCError(.invalidConfig, "idps: \(id) appears twice") }
      if idp.enabled && idp.clientId.isEmpty && idp.clientIds.isEmpty {
        throw RPCError(.invalidConfig, "idps: \(id) needs client_id")
      }
      try validateListsAndKeys(idp)
      for url in [idp.jwksUrl, idp.apiBaseUrl] where !url.isEmpty && !url.hasPrefix("https://") {
        throw RPCError(.invalidConfig, "idps: \(id): URLs must be https")
      }
    }
  }

  /// `client_ids` (any OIDC provider), and apple.com's revocation key: the team id and
  /// key id Apple shows (short ASCII letters and digits) and a P-256 PKCS#8 PEM key.
  static func validateListsAndKeys(_ idp: IdpConfig) throws(RPCError) {
    let id = idp.providerId
    guard idp.clientIds.count <= 32 else {
      throw RPCError(.invalidConfig, "idps: \(id): at most 32 client_ids")
    }
    for clientID in idp.clientIds {
      guard !clientID.isEmpty, clientID.utf8.count <= 256, !ProviderText.hasControl(clientID) else {
        throw RPCError(.invalidConfig, "idps: \(id): client_ids entries must be 1 to 256 bytes of text")
      }
    }
    if id == "facebook.com" && !idp.clientIds.isEmpty {
      throw RPCError(.invalidConfig, "idps: facebook.com takes one client_id (the app id)")
    }
    let revocation = [idp.teamId, idp.keyId, idp.privateKey]
    guard id == "apple.com" || revocation.allSatisfy(\.isEmpty) else {
      throw RPCError(.invalidConfig, "idps: team_id, key_id and private_key are for apple.com")
    }
    for (name, value) in [("team_id", idp.teamId), ("key_id", idp.keyId)]
    where value.utf8.count > 32 || !value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
      throw RPCError(.invalidConfig, "idps: apple.com: \(name) must be up to 32 ASCII letters and digits")
    }
    if !idp.privateKey.isEmpty {
      guard idp.privateKey.utf8.count <= 4096, (try? ECP256SigningKey(pkcs8PEM: idp.privateKey)) != nil else {
        throw RPCError(
          .invalidConfig, "idps: apple.com: private_key must be a P-256 key in PKCS#8 PEM (the .p8 file)")
      }
    }
  }

  /// Project ids as Firebase allows them: 4 to 30 of [a-z0-9-], starting with a letter.
  static func validProjectID(_ id: String) -> Bool {
    guard (4...30).contains(id.count), let first = id.first, first.isASCII, first.isLowercase else {
      return false
    }
    return id.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
  }
}
