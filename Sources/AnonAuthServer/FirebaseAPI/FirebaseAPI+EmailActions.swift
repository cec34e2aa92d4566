import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire

extension FirebaseAPI {
  /// Identity Toolkit v1's email actions, each onto its native AccountService method
  /// (`accounts:update` with `oobCode` is in `update`), the admin form of
  /// `accounts:sendOobCode` (`returnOobLink`) onto AdminService `GenerateActionLink`, and
  /// the Auth Emulator's list of sent codes (on the emulator listener, in --dev only).
  public static let emailActionEndpoints: [Endpoint] = [
    Endpoint("accounts:sendOobCode", path: "/v1/accounts:sendOobCode", handle: sendOobCode),
    Endpoint("accounts:resetPassword", path: "/v1/accounts:resetPassword", handle: resetPassword),
    Endpoint(
      "accounts:signInWithEmailLink", path: "/v1/accounts:signInWithEmailLink", handle: signInWithEmailLink),
    Endpoint(
      "projects.accounts:sendOobCode", path: "/v1/projects/{project}/accounts:sendOobCode",
      handle: adminSendOobCode),
    Endpoint(
      "emulator.oobCodes", "GET", path: "/emulator/v1/projects/{project}/oobCodes", handle: emulatorOobCodes),
  ]

  /// The request's fields as native `SendOobCodeRequest` (Firebase's names, the locale
  /// from `X-Firebase-Locale`).
  static func oobRequest(_ call: Call) throws(FirebaseError) -> SendOobCodeRequest {
    var request = SendOobCodeRequest()
    request.requestType = try call.string("requestType") ?? ""
    guard !request.requestType.isEmpty else { throw FirebaseError(status: 400, message: "MISSING_REQ_TYPE") }
    request.email = try call.string("email") ?? ""
    request.idToken = try call.string("idToken") ?? ""
    request.newEmail = try call.string("newEmail") ?? ""
    var settings = ActionCodeSettings()
    settings.continueUrl = try call.string("continueUrl") ?? ""
    settings.canHandleCodeInApp = try call.bool("canHandleCodeInApp")
    settings.iosBundleId = try call.string("iOSBundleId", "iosBundleId") ?? ""
    settings.androidPackageName = try call.string("androidPackageName") ?? ""
    request.settings = settings
    request.locale = String((call.request.header("x-firebase-locale") ?? "").prefix(35))
    switch request.requestType {
    case "PASSWORD_RESET", "EMAIL_SIGNIN":
      guard !request.email.isEmpty else { throw FirebaseError(status: 400, message: "MISSING_EMAIL") }
    case "VERIFY_EMAIL":
      guard !request.idToken.isEmpty || call.pathParameters["project"] != nil else {
        throw FirebaseError(status: 400, message: "MISSING_ID_TOKEN")
      }
    case "VERIFY_AND_CHANGE_EMAIL":
      guard !request.newEmail.isEmpty else { throw FirebaseError(status: 400, message: "MISSING_NEW_EMAIL") }
    default: break
    }
    return request
  }

  /// `accounts:sendOobCode` as an app calls it: the mail is sent (or, under enumeration
  /// protection, answered as if it were).
  public static func sendOobCode(_ call: Call) async throws(FirebaseError) -> JSONValue {
    if try call.bool("returnOobLink") {
      throw FirebaseError(
        status: 400,
        message: "INSUFFICIENT_PERMISSION : returnOobLink is for administrators (the project path)")
    }
    let response = try await call.native(AccountServiceMethods.sendOobCode, try oobRequest(call))
    return oobResponse(response)
  }

  /// The Admin SDKs' `generatePasswordResetLink` and its siblings:
  /// `POST /v1/projects/{project}/accounts:sendOobCode` with `returnOobLink: true`.
  public static func adminSendOobCode(_ call: Call) async throws(FirebaseError) -> JSONValue {
    guard try call.bool("returnOobLink") else {
      throw FirebaseError(
        status: 400,
        message:
          "INVALID_ARGUMENT : on the project path only returnOobLink is served; apps use /v1/accounts:sendOobCode"
      )
    }
    var request = GenerateActionLinkRequest()
    request.projectId = adminProject(call)
    request.request = try oobRequest(call)
    return oobResponse(try await call.native(AdminServiceMethods.generateActionLink, request))
  }

  static func oobResponse(_ response: SendOobCodeResponse) -> JSONValue {
    var out: [String: JSONValue] = ["kind": "identitytoolkit#GetOobConfirmationCodeResponse"]
    if !response.email.isEmpty { out["email"] = .string(response.email) }
    if !response.oobLink.isEmpty {
      out["oobLink"] = .string(response.oobLink)
      out["oobCode"] = .string(response.oobCode)
    }
    return .object(out)
  }

  /// `accounts:resetPassword`: with `newPassword` sets it; without, only says what the
  /// code is for (FirebaseAuth's `verifyPasswordResetCode` and `checkActionCode`).
  public static func resetPassword(_ call: Call) async throws(FirebaseError) -> JSONValue {
    var request = ResetPasswordRequest()
    request.oobCode = try call.required("MISSING_OOB_CODE", "oobCode")
    request.newPassword = try call.string("newPassword") ?? ""
    let response = try await call.native(AccountServiceMethods.resetPassword, request)
    var out: [String: JSONValue] = [
      "kind": "identitytoolkit#ResetPasswordResponse", "email": .string(response.email),
      "requestType": .string(response.requestType),
    ]
    if !response.newEmail.isEmpty { out["newEmail"] = .string(response.newEmail) }
    return .object(out)
  }

  /// `accounts:update` with `oobCode`: applies a verification or email-change code.
  static func applyActionCode(_ call: Call, code: String) async throws(FirebaseError) -> JSONValue {
    var request = ApplyActionCodeRequest()
    request.oobCode = code
    let account = try await call.native(AccountServiceMethods.applyActionCode, request)
    return setAccountInfoResponse(account, tokens: nil)
  }

  /// `accounts:signInWithEmailLink`: `email` and `oobCode`, and `idToken` to link.
  public static func signInWithEmailLink(_ call: Call) async throws(FirebaseError) -> JSONValue {
    var request = SignInWithEmailLinkRequest()
    request.email = try call.required("MISSING_EMAIL", "email")
    request.oobCode = try call.required("MISSING_OOB_CODE", "oobCode")
    request.idToken = try call.string("idToken") ?? ""
    let response = try await call.native(AccountServiceMethods.signInWithEmailLink, request)
    var out = signedIn(response, kind: "identitytoolkit#EmailLinkSigninResponse")
    out["isNewUser"] = .bool(response.isNewUser)
    if out["email"] == nil { out["email"] = .string(request.email) }
    return .object(out)
  }

  /// The Auth Emulator's `GET /emulator/v1/projects/{project}/oobCodes`: the codes sent
  /// since start, on the emulator listener of a --dev daemon only (404 anywhere else).
  public static func emulatorOobCodes(_ call: Call) async throws(FirebaseError) -> JSONValue {
    guard call.info.listener == .emulator, let mailbox = call.devMailbox else {
      throw FirebaseError.notFound(path: call.request.path)
    }
    let codes = mailbox.codes(projectID: call.pathParameters["project"] ?? "")
    return [
      "oobCodes": .array(
        codes.map { entry in
          [
            "email": .string(entry.email), "oobCode": .string(entry.oobCode),
            "oobLink": .string(entry.oobLink),
            "requestType": .string(entry.requestType),
          ]
        })
    ]
  }
}
