import AnonAuthCrypto
import AnonAuthWire

/// Firebase's `accounts:batchCreate` body in native terms: one user object becomes an
/// `ImportedAccount`, the hash options a `PasswordHashConfig`. Bytes (hashes, salts,
/// keys) come as base64, standard or URL-safe (the Admin SDKs send the latter).
enum AdminImportJSON {
  /// A row that cannot even be decoded: reported at its index like the native row errors.
  struct RowRefusal: Error {
    let message: String
  }

  static func account(_ value: JSONValue) throws(RowRefusal) -> ImportedAccount {
    guard case .object(let user) = value else {
      throw RowRefusal(message: "INVALID_FIELD : a user is not an object")
    }
    if let phone = user["phoneNumber"]?.stringValue, !phone.isEmpty {
      throw RowRefusal(message: "INVALID_PHONE_NUMBER : phone numbers are not supported")
    }
    var account = ImportedAccount()
    account.localId = try string(user, "localId")
    account.email = try string(user, "email")
    account.emailVerified = try bool(user, "emailVerified")
    account.displayName = try string(user, "displayName")
    account.photoUrl = try string(user, "photoUrl")
    account.disabled = try bool(user, "disabled")
    account.createdAtMs = try int64(user, "createdAt")
    account.lastSignInAtMs = try int64(user, "lastLoginAt")
    account.customClaimsJson = try string(user, "customAttributes")
    account.passwordHash = try bytes(user, "passwordHash")
    account.salt = try bytes(user, "salt")
    if let providers = user["providerUserInfo"] {
      guard case .array(let items) = providers else {
        throw RowRefusal(message: "INVALID_FIELD : providerUserInfo is not an array")
      }
      for item in items {
        guard case .object(let fields) = item else {
          throw RowRefusal(message: "INVALID_FIELD : a providerUserInfo item is not an object")
        }
        var provider = ImportedProvider()
        provider.providerId = try string(fields, "providerId")
        provider.rawId = try string(fields, "rawId")
        provider.email = try string(fields, "email")
        provider.displayName = try string(fields, "displayName")
        provider.photoUrl = try string(fields, "photoUrl")
        account.providers.append(provider)
      }
    }
    return account
  }

  /// The request's hash options; nil without `hashAlgorithm`.
  static func hashConfig(_ call: FirebaseAPI.Call) throws(FirebaseError) -> PasswordHashConfig? {
    guard let algorithm = try call.string("hashAlgorithm"), !algorithm.isEmpty else { return nil }
    var config = PasswordHashConfig()
    config.algorithm = algorithm
    do throws(RowRefusal) {
      config.signerKey = try bytes(call.body, "signerKey")
      config.saltSeparator = try bytes(call.body, "saltSeparator")
    } catch {
      throw FirebaseError(status: 400, message: "INVALID_HASH_KEY : \(error.message)")
    }
    let rounds = try call.int64("rounds")
    let memoryCost = try call.int64("memoryCost")
    guard let rounds = UInt32(exactly: rounds), let memoryCost = UInt32(exactly: memoryCost) else {
      throw FirebaseError(status: 400, message: "INVALID_ARGUMENT : rounds or memoryCost out of range")
    }
    config.rounds = rounds
    config.memCost = memoryCost
    config.saltFirst = try call.string("passwordHashOrder") == "SALT_AND_PASSWORD"
    return config
  }

  private static func string(_ object: [String: JSONValue], _ key: String) throws(RowRefusal) -> String {
    switch object[key] {
    case nil, .null?: return ""
    case .string(let value)?: return value
    default: throw RowRefusal(message: "INVALID_FIELD : \(key) is not a string")
    }
  }

  private static func bool(_ object: [String: JSONValue], _ key: String) throws(RowRefusal) -> Bool {
    switch object[key] {
    case nil, .null?: return false
    case .bool(let value)?: return value
    default: throw RowRefusal(message: "INVALID_FIELD : \(key) is not a boolean")
    }
  }

  /// A JSON number, or a string of digits (Google's JSON mapping of int64).
  private static func int64(_ object: [String: JSONValue], _ key: String) throws(RowRefusal) -> Int64 {
    switch object[key] {
    case nil, .null?: return 0
    case .string(let text)?:
      guard let value = Int64(text) else {
        throw RowRefusal(message: "INVALID_FIELD : \(key) is not an integer")
      }
      return value
    case let value?:
      guard let number = value.int64Value else {
        throw RowRefusal(message: "INVALID_FIELD : \(key) is not an integer")
      }
      return number
    }
  }

  /// Base64, standard or URL-safe, padded or not.
  static func bytes(_ object: [String: JSONValue], _ key: String) throws(RowRefusal) -> [UInt8] {
    let text = try string(object, key)
    guard !text.isEmpty else { return [] }
    var url = ""
    for character in text where character != "=" {
      url.append(character == "+" ? "-" : character == "/" ? "_" : character)
    }
    guard let decoded = Base64URL.decode(url) else {
      throw RowRefusal(message: "INVALID_FIELD : \(key) is not base64")
    }
    return decoded
  }
}
