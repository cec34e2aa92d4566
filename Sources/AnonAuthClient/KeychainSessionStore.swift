#if canImport(Security)
  import Foundation
  import Security

  /// Keeps the session in the Keychain as a generic password, readable after the first
  /// unlock on this device only (as FirebaseAuth keeps its user).
  public struct KeychainSessionStore: SessionStore {
    public let service: String
    public let account: String

    /// - Parameters:
    ///   - service: the Keychain service; one per app is enough.
    ///   - account: one per `Auth` (per project) in the app.
    public init(service: String = "AnonAuthClient", account: String = "session") {
      self.service = service
      self.account = account
    }

    private var query: [String: Any] {
      [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: service,
        kSecAttrAccount as String: account,
      ]
    }

    public func load() -> Session? {
      var search = query
      search[kSecReturnData as String] = true
      search[kSecMatchLimit as String] = kSecMatchLimitOne
      var item: CFTypeRef?
      guard SecItemCopyMatching(search as CFDictionary, &item) == errSecSuccess, let data = item as? Data
      else { return nil }
      return try? JSONDecoder().decode(Session.self, from: data)
    }

    public func save(_ session: Session?) throws {
      guard let session else {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
          throw KeychainError(status: status)
        }
        return
      }
      let data = try JSONEncoder().encode(session)
      let update: [String: Any] = [
        kSecValueData as String: data,
        kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
      ]
      var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
      if status == errSecItemNotFound {
        status = SecItemAdd(query.merging(update) { $1 } as CFDictionary, nil)
      }
      guard status == errSecSuccess else { throw KeychainError(status: status) }
    }
  }

  /// A Keychain call failed with this `OSStatus`.
  public struct KeychainError: Error, Sendable {
    public let status: OSStatus
  }
#endif
