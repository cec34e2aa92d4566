import AnonAuthWire
import Foundation

/// Identity-provider configs from a JSON file (`idps=@FILE`), in the proto's field names.
enum IdpFile {
  static func load(_ value: String) throws(CLIError) -> [IdpConfig] {
    try JSONObjectsFile.load(value, setting: "idps").map { o in
      var idp = IdpConfig()
      idp.providerId = o["provider_id"] as? String ?? ""
      idp.enabled = o["enabled"] as? Bool ?? false
      idp.clientId = o["client_id"] as? String ?? ""
      idp.issuer = o["issuer"] as? String ?? ""
      idp.jwksJson = o["jwks_json"] as? String ?? ""
      idp.jwksUrl = o["jwks_url"] as? String ?? ""
      idp.clientSecret = o["client_secret"] as? String ?? ""
      idp.apiBaseUrl = o["api_base_url"] as? String ?? ""
      idp.clientIds = o["client_ids"] as? [String] ?? []
      idp.teamId = o["team_id"] as? String ?? ""
      idp.keyId = o["key_id"] as? String ?? ""
      idp.privateKey = o["private_key"] as? String ?? ""
      return idp
    }
  }
}

/// A project's mail texts from a JSON file (`email_templates=@FILE`), in the proto's
/// field names; `[]` goes back to the built-in texts.
enum EmailTemplateFile {
  static func load(_ value: String) throws(CLIError) -> [EmailTemplate] {
    try JSONObjectsFile.load(value, setting: "email_templates").map { o in
      EmailTemplate(
        requestType: o["request_type"] as? String ?? "", language: o["language"] as? String ?? "",
        subject: o["subject"] as? String ?? "", text: o["text"] as? String ?? "",
        html: o["html"] as? String ?? "")
    }
  }
}

/// The `@FILE` of a setting whose value is a JSON array of objects, read and parsed, with
/// the setting's name in the usage error.
enum JSONObjectsFile {
  static func load(_ value: String, setting: String) throws(CLIError) -> [[String: Any]] {
    guard value.hasPrefix("@") else { throw .usage("\(setting): expected @FILE (a JSON array)") }
    let path = String(value.dropFirst())
    guard let data = FileManager.default.contents(atPath: path),
      let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
    else { throw .usage("\(setting): \(path) is not a JSON array of objects") }
    return list
  }
}
