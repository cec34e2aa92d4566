// A stand-in for Apple's `Security` module, for Linux: the declarations
// KeychainSessionStore uses, with the Apple SDK's names, types and status values, over an
// in-memory keychain that can be locked. Scripts/check_keychain_stub.sh compiles the real
// Sources/AnonAuthClient/KeychainSessionStore.swift against it and runs
// KeychainStoreCheck.swift. It is never part of the package graph, so nothing else sees a
// module named Security.
import Foundation

public typealias OSStatus = Int32
public typealias CFString = NSString
public typealias CFDictionary = NSDictionary
public typealias CFTypeRef = AnyObject

// Apple imports these constants from C, unchecked; written in Swift they need
// `nonisolated(unsafe)`: they are never mutated.

public let errSecSuccess: OSStatus = 0
public let errSecItemNotFound: OSStatus = -25300
public let errSecDuplicateItem: OSStatus = -25299
public let errSecInteractionNotAllowed: OSStatus = -25308

public nonisolated(unsafe) let kSecClass: CFString = "class"
public nonisolated(unsafe) let kSecClassGenericPassword: CFString = "genp"
public nonisolated(unsafe) let kSecAttrService: CFString = "svce"
public nonisolated(unsafe) let kSecAttrAccount: CFString = "acct"
public nonisolated(unsafe) let kSecAttrAccessGroup: CFString = "agrp"
public nonisolated(unsafe) let kSecAttrAccessible: CFString = "pdmn"
public nonisolated(unsafe) let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
public nonisolated(unsafe) let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
public nonisolated(unsafe) let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
public nonisolated(unsafe) let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
public nonisolated(unsafe) let kSecUseDataProtectionKeychain: CFString = "nleg"
public nonisolated(unsafe) let kSecReturnData: CFString = "r_Data"
public nonisolated(unsafe) let kSecMatchLimit: CFString = "m_Limit"
public nonisolated(unsafe) let kSecMatchLimitOne: CFString = "m_LimitOne"
public nonisolated(unsafe) let kSecValueData: CFString = "v_Data"

/// The in-memory keychain: items by (service, account, access group), and whether the
/// device is locked (every call then answers `errSecInteractionNotAllowed`).
public enum StubKeychain {
  public struct Item: Sendable {
    public var data: Data
    public var accessible: String
    public var dataProtection: Bool
  }
  nonisolated(unsafe) private static var items: [String: Item] = [:]
  nonisolated(unsafe) public static var locked = false
  private static let lock = NSLock()

  static func withItems<T>(_ body: (inout [String: Item]) -> T) -> T {
    lock.lock()
    defer { lock.unlock() }
    return body(&items)
  }

  /// The item of a query, for the check to look at.
  public static func item(service: String, account: String, group: String? = nil) -> Item? {
    withItems { $0[key(service, account, group)] }
  }

  static func key(_ service: String, _ account: String, _ group: String?) -> String {
    "\(service)|\(account)|\(group ?? "")"
  }

  static func key(of query: NSDictionary) -> String? {
    guard query[kSecClass as String] as? String == kSecClassGenericPassword as String,
      let service = query[kSecAttrService as String] as? String,
      let account = query[kSecAttrAccount as String] as? String
    else { return nil }
    return key(service, account, query[kSecAttrAccessGroup as String] as? String)
  }
}

private let errSecParam: OSStatus = -50

public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?)
  -> OSStatus
{
  if StubKeychain.locked { return errSecInteractionNotAllowed }
  guard let key = StubKeychain.key(of: query) else { return errSecParam }
  guard let item = StubKeychain.withItems({ $0[key] }) else { return errSecItemNotFound }
  result?.pointee = item.data as NSData
  return errSecSuccess
}

public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
  if StubKeychain.locked { return errSecInteractionNotAllowed }
  guard let key = StubKeychain.key(of: attributes), let data = attributes[kSecValueData as String] as? Data
  else {
    return errSecParam
  }
  let item = StubKeychain.Item(
    data: data, accessible: attributes[kSecAttrAccessible as String] as? String ?? "",
    dataProtection: attributes[kSecUseDataProtectionKeychain as String] as? Bool ?? false)
  return StubKeychain.withItems { items in
    if items[key] != nil { return errSecDuplicateItem }
    items[key] = item
    return errSecSuccess
  }
}

public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
  if StubKeychain.locked { return errSecInteractionNotAllowed }
  guard let key = StubKeychain.key(of: query) else { return errSecParam }
  return StubKeychain.withItems { items in
    guard var item = items[key] else { return errSecItemNotFound }
    if let data = attributesToUpdate[kSecValueData as String] as? Data { item.data = data }
    if let accessible = attributesToUpdate[kSecAttrAccessible as String] as? String {
      item.accessible = accessible
    }
    items[key] = item
    return errSecSuccess
  }
}

public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
  if StubKeychain.locked { return errSecInteractionNotAllowed }
  guard let key = StubKeychain.key(of: query) else { return errSecParam }
  return StubKeychain.withItems { $0.removeValue(forKey: key) == nil ? errSecItemNotFound : errSecSuccess }
}
