import AnonAuthCrypto
import AnonAuthWire

/// Identity-provider configs as the store keeps them: JSON, with the client secret (and
/// apple.com's private key) sealed under the master key, so a copy of the store does not
/// leak provider secrets.
enum IdpConfigCodec {
  static func encode(_ idps: [IdpConfig], masterKey: [UInt8]) throws -> String {
    let list: [JSONValue] = try idps.map { idp in
      var object: [String: JSONValue] = [
        "provider_id": .string(idp.providerId), "enabled": .bool(idp.enabled),
        "client_id": .string(idp.clientId),
        "issuer": .string(idp.issuer), "jwks_json": .string(idp.jwksJson), "jwks_url": .string(idp.jwksUrl),
        "api_base_url": .string(idp.apiBaseUrl),
      ]
      if !idp.clientSecret.isEmpty {
        let sealed = try AESGCM.seal(
          Array(idp.clientSecret.utf8), key: masterKey, associatedData: Array(idp.providerId.utf8))
        object["client_secret_sealed"] = .string(Base64URL.encode(sealed))
      }
      // Written only when set, so that configs without them keep their stored form.
      if !idp.clientIds.isEmpty { object["client_ids"] = .array(idp.clientIds.map { .string($0) }) }
      if !idp.teamId.isEmpty { object["team_id"] = .string(idp.teamId) }
      if !idp.keyId.isEmpty { object["key_id"] = .string(idp.keyId) }
      if !idp.privateKey.isEmpty {
        let sealed = try AESGCM.seal(
          Array(idp.privateKey.utf8), key: masterKey, associatedData: Array((idp.providerId + " key").utf8))
        object["private_key_sealed"] = .string(Base64URL.encode(sealed))
      }
      return .object(object)
    }
    return JSONValue.array(list).jsonText
  }

  /// - Parameter withSecrets: false for anything returned to a caller.
  static func decode(_ json: String, masterKey: [UInt8], withSecrets: Bool) -> [IdpConfig] {
    guard let list = JSONValue(jsonBytes: Array(json.utf8))?.arrayValue else { return [] }
    return list.compactMap { value in
      guard let object = value.objectValue else { return nil }
      var idp = IdpConfig()
      idp.providerId = object["provider_id"]?.stringValue ?? ""
      idp.enabled = object["enabled"]?.boolValue ?? false
      idp.clientId = object["client_id"]?.stringValue ?? ""
      idp.issuer = object["issuer"]?.stringValue ?? ""
      idp.jwksJson = object["jwks_json"]?.stringValue ?? ""
      idp.jwksUrl = object["jwks_url"]?.stringValue ?? ""
      idp.apiBaseUrl = object["api_base_url"]?.stringValue ?? ""
      idp.clientIds = object["client_ids"]?.arrayValue?.compactMap(\.stringValue) ?? []
      idp.teamId = object["team_id"]?.stringValue ?? ""
      idp.keyId = object["key_id"]?.stringValue ?? ""
      if withSecrets,
        let sealed = object["private_key_sealed"]?.stringValue.flatMap({ Base64URL.decode($0) }),
        let key = try? AESGCM.open(
          sealed, key: masterKey, associatedData: Array((idp.providerId + " key").utf8))
      {
        idp.privateKey = String(decoding: key, as: UTF8.self)
      }
      if withSecrets,
        let sealed = object["client_secret_sealed"]?.stringValue.flatMap({ Base64URL.decode($0) }),
        let secret = try? AESGCM.open(sealed, key: masterKey, associatedData: Array(idp.providerId.utf8))
      {
        idp.clientSecret = String(decoding: secret, as: UTF8.self)
      }
      return idp
    }
  }
}
