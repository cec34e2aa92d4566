#if canImport(Security)
  import Foundation
  import Security

  /// Keeps the session in the data-protection Keychain as a generic password: the default
  /// store on Apple platforms, as FirebaseAuth keeps its user there. A locked Keychain
  /// (before the first unlock after a restart) is told apart from an empty one, so that a
  /// prewarmed or background launch never takes the user for signed out.
  public struct KeychainSessionStore: AccessGroupSessionStore {
    /// When the item can be read, `kSecAttrAccessible`.
    public enum Accessibility: Sendable {
      /// After the first unlock until the next restart, this device only (the default,
      /// what background launches need).
      case afterFirstUnlockThisDeviceOnly
      /// The same, and restored from backups to other devices.
      case afterFirstUnlock
      /// Only while the device is unlocked, this device only.
      case whenUnlockedThisDeviceOnly
      /// Only while the device is unlocked.
      case whenUnlocked

      var attribute: CFString {
        switch self {
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
        }
      }
    }

    public let service: String
    public let account: String
    /// The Keychain access group shared with the app's extensions; nil for the app's own.
    public let accessGroup: String?
    public let accessibility: Accessibility

    /// - Parameters:
    ///   - service: the Keychain service; one per app is enough.
    ///   - account: one per `Auth` (per project) in the app.
    ///   - accessGroup: a group of the app's `keychain-access-groups` entitlement.
    public init(
      service: String = "AnonAuthClient", account: String = "session", accessGroup: String? = nil,
      accessibility: Accessibility = .afterFirstUnlockThisDeviceOnly
    ) {
      self.service = service
      self.account = account
      self.accessGroup = accessGroup
      self.accessibility = accessibility
    }

    public func withAccessGroup(_ accessGroup: String?) -> any SessionStore {
      KeychainSessionStore(
        service: service, account: account, accessGroup: accessGroup, accessibility: accessibility)
    }

    /// The item's identity. `kSecUseDataProtectionKeychain` keeps it out of macOS's
    /// legacy file keychain, where the accessibility class would not apply.
    private var query: [String: Any] {
      var query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: service,
        kSecAttrAccount as String: account,
        kSecUseDataProtectionKeychain as String: true,
      ]
      if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
      return query
    }

    /// - Throws: `SessionStoreError.locked` while protected data is unavailable,
    ///   `.failed(status:)` for any other Keychain failure; nil only when there is no item.
    public func load() throws -> Session? {
      var search = query
      search[kSecReturnData as String] = true
      search[kSecMatchLimit as String] = kSecMatchLimitOne
      var item: CFTypeRef?
      let status = SecItemCopyMatching(search as CFDictionary, &item)
      switch status {
      case errSecSuccess:
        guard let data = item as? Data else { return nil }
        return try? JSONDecoder().decode(Session.self, from: data)
      case errSecItemNotFound:
        return nil
      default:
        throw Self.error(status)
      }
    }

    public func save(_ session: Session?) throws {
      guard let session else {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.error(status) }
        return
      }
      let data = try JSONEncoder().encode(session)
      let update: [String: Any] = [
        kSecValueData as String: data,
        kSecAttrAccessible as String: accessibility.attribute,
      ]
      var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
      if status == errSecItemNotFound {
        status = SecItemAdd(query.merging(update) { $1 } as CFDictionary, nil)
      }
      guard status == errSecSuccess else { throw Self.error(status) }
    }

    /// `errSecInteractionNotAllowed` is the locked Keychain; anything else a failure.
    static func error(_ status: OSStatus) -> SessionStoreError {
      status == errSecInteractionNotAllowed ? .locked : .failed(status: status)
    }
  }
#endif
