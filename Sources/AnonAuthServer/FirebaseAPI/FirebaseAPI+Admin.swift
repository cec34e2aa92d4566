import AnonAuthCrypto
import AnonAuthWire

extension FirebaseAPI {
  /// Identity Toolkit v1's admin calls, as Firebase's Admin SDKs make them:
  /// `/v1/projects/{project}/accounts...` (also under `/identitytoolkit.googleapis.com`),
  /// authenticated by `Authorization: Bearer <admin key>` (on the emulator listener also
  /// `Bearer owner`, `AdminEmulatorOwner`), each onto native AdminService methods, which
  /// check the key and that `{project}` exists (docs/http-admin-api.md).
  public static let adminEndpoints: [Endpoint] = [
    Endpoint("projects.accounts", path: "/v1/projects/{project}/accounts", handle: adminCreate),
    Endpoint("projects.accounts:lookup", path: "/v1/projects/{project}/accounts:lookup", handle: adminLookup),
    Endpoint(
      "projects.accounts:batchGet", "GET", path: "/v1/projects/{project}/accounts:batchGet",
      handle: adminBatchGet),
    Endpoint("projects.accounts:update", path: "/v1/projects/{project}/accounts:update", handle: adminUpdate),
    Endpoint("projects.accounts:delete", path: "/v1/projects/{project}/accounts:delete", handle: adminDelete),
    Endpoint(
      "projects.accounts:batchDelete", path: "/v1/projects/{project}/accounts:batchDelete",
      handle: adminBatchDelete),
    Endpoint(
      "projects.accounts:batchCreate", path: "/v1/projects/{project}/accounts:batchCreate",
      handle: adminBatchCreate),
  ]

  /// `{project}` of the path.
  static func adminProject(_ call: Call) -> String { call.pathParameters["project"] ?? "" }

  /// Phone numbers are a sign-in method AnonAuth does not have: refused rather than
  /// dropped, so an app never believes it stored one.
  static func refusePhone(_ call: Call) throws(FirebaseError) {
    if try call.string("phoneNumber").map({ !$0.isEmpty }) == true {
      throw FirebaseError(status: 400, message: "INVALID_PHONE_NUMBER : phone numbers are not supported")
    }
  }

  /// Firebase's `accounts` (create): native `CreateAccount`.
  public static func adminCreate(_ call: Call) async throws(FirebaseError) -> JSONValue {
    try refusePhone(call)
    var request = CreateAccountRequest()
    request.projectId = adminProject(call)
    request.localId = try call.string("localId") ?? ""
    request.email = try call.string("email") ?? ""
    request.password = try call.string("password") ?? ""
    request.displayName = try call.string("displayName") ?? ""
    request.photoUrl = try call.string("photoUrl") ?? ""
    request.disabled = try call.bool("disabled")
    request.emailVerified = try call.bool("emailVerified")
    let account = try await call.native(AdminServiceMethods.createAccount, request)
    var out: [String: JSONValue] = [
      "kind": "identitytoolkit#SignupNewUserResponse", "localId": .string(account.localId),
    ]
    if !account.email.isEmpty { out["email"] = .string(account.email) }
    if !account.displayName.isEmpty { out["displayName"] = .string(account.displayName) }
    return .object(out)
  }

  /// Firebase's `accounts:lookup` as an administrator: `localId` and `email` arrays
  /// (native `LookupAccounts`); `users` holds the accounts found and is left out when
  /// there are none, as Firebase does. Phone numbers and federated ids find nothing.
  public static func adminLookup(_ call: Call) async throws(FirebaseError) -> JSONValue {
    var request = LookupAccountsRequest()
    request.projectId = adminProject(call)
    request.localIds = try call.strings("localId")
    request.emails = try call.strings("email")
    let found = try await call.native(AdminServiceMethods.lookupAccounts, request)
    var out: [String: JSONValue] = ["kind": "identitytoolkit#GetAccountInfoResponse"]
    if !found.accounts.isEmpty {
      out["users"] = .array(
        found.accounts.enumerated().map { index, account in
          adminUser(account, photoURL: index < found.photoUrls.count ? found.photoUrls[index] : "")
        })
    }
    return .object(out)
  }

  /// Firebase's user object with the photo URL, which the admin API carries.
  static func adminUser(_ account: AccountInfo, photoURL: String) -> JSONValue {
    guard !photoURL.isEmpty, case .object(var user) = FirebaseUserJSON.user(account) else {
      return FirebaseUserJSON.user(account)
    }
    user["photoUrl"] = .string(photoURL)
    return .object(user)
  }

  /// Firebase's `accounts:update` as an administrator (`update_user`,
  /// `set_custom_user_claims` and `revoke_refresh_tokens` all send it): each member
  /// present becomes a field of native `UpdateAccount`'s mask.
  public static func adminUpdate(_ call: Call) async throws(FirebaseError) -> JSONValue {
    try refusePhone(call)
    var request = UpdateAccountRequest()
    request.projectId = adminProject(call)
    request.localId = try call.required("MISSING_LOCAL_ID", "localId")
    // Each string member present sets its field and enters the mask, in this order.
    let strings: [(member: String, field: WritableKeyPath<UpdateAccountRequest, String>, mask: String)] = [
      ("email", \.email, "email"), ("password", \.password, "password"),
      ("displayName", \.displayName, "display_name"), ("photoUrl", \.photoUrl, "photo_url"),
    ]
    for (member, field, mask) in strings {
      if let value = try call.string(member) {
        request[keyPath: field] = value
        request.updateMask.append(mask)
      }
    }
    for attribute in try call.strings("deleteAttribute") {
      switch attribute {
      case "DISPLAY_NAME":
        request.displayName = ""
        request.updateMask.append("display_name")
      case "PHOTO_URL":
        request.photoUrl = ""
        request.updateMask.append("photo_url")
      default:
        throw FirebaseError(
          status: 400, message: "INVALID_ARGUMENT : deleteAttribute \(attribute.prefix(32))")
      }
    }
    if call.has("disableUser") {
      request.disabled = try call.bool("disableUser")
      request.updateMask.append("disabled")
    }
    if call.has("emailVerified") {
      request.emailVerified = try call.bool("emailVerified")
      request.updateMask.append("email_verified")
    }
    if let claims = try call.string("customAttributes") {
      // The Admin SDK sends "{}" to remove every claim.
      request.customClaimsJson = JSONValue(jsonBytes: Array(claims.utf8)) == .object([:]) ? "" : claims
      request.updateMask.append("custom_claims_json")
    }
    if call.has("validSince") {
      request.validSince = try call.int64("validSince")
      request.updateMask.append("valid_since")
    }
    let providers = try call.strings("deleteProvider")
    if !providers.isEmpty {
      request.deleteProviders = providers
      request.updateMask.append("delete_providers")
    }
    let account: AccountInfo
    if request.updateMask.isEmpty {
      var lookup = LookupAccountsRequest()
      lookup.projectId = request.projectId
      lookup.localIds = [request.localId]
      guard let found = try await call.native(AdminServiceMethods.lookupAccounts, lookup).accounts.first
      else {
        throw FirebaseError(RPCError(.userNotFound, "no such account"))
      }
      account = found
    } else {
      account = try await call.native(AdminServiceMethods.updateAccount, request)
    }
    return setAccountInfoResponse(account, tokens: nil)
  }

  /// Firebase's `accounts:delete` as an administrator: one `localId` (native
  /// `DeleteAccounts`); an unknown one is `USER_NOT_FOUND`, as Firebase answers it.
  public static func adminDelete(_ call: Call) async throws(FirebaseError) -> JSONValue {
    var request = DeleteAccountsRequest()
    request.projectId = adminProject(call)
    request.localIds = [try call.required("MISSING_LOCAL_ID", "localId")]
    let deleted = try await call.native(AdminServiceMethods.deleteAccounts, request).deleted
    guard deleted == 1 else { throw FirebaseError(RPCError(.userNotFound, "no such account")) }
    return ["kind": "identitytoolkit#DeleteAccountResponse"]
  }
}

extension FirebaseAPI.Call {
  /// Whether the body has `key` with a value other than null.
  func has(_ key: String) -> Bool {
    switch body[key] {
    case nil, .null?: return false
    default: return true
    }
  }

  /// The integer member `key` (a JSON number or, as Google's JSON mapping sends int64, a
  /// string of digits); 0 when absent.
  func int64(_ key: String) throws(FirebaseError) -> Int64 {
    switch body[key] {
    case nil, .null?: return 0
    case .string(let text)?:
      guard let value = Int64(text) else { throw FirebaseError.invalidValue(key, expected: "TYPE_INT64") }
      return value
    case let value?:
      guard let number = value.int64Value else {
        throw FirebaseError.invalidValue(key, expected: "TYPE_INT64")
      }
      return number
    }
  }
}
