import AnonAuthClient
import FirebaseAppCode
import Foundation

/// Runs the app code of Tests/FirebaseAppCode (written to FirebaseAuth 12's API) against
/// a real daemon's HTTPS API, on the main queue as an app does, and prints what it saw as
/// one JSON object; Tests/Interop/test_firebase_app_code.py runs it and checks it.
///
///     anonauth-firebase-app BASE_URL API_KEY EMAIL_PREFIX [GOOGLE_ID_TOKEN]
///
/// The one AnonAuth line is `Auth.configure(baseURL:apiKey:)` (where a Firebase app calls
/// `FirebaseApp.configure()`); the session is kept in the default store, a file under
/// $XDG_DATA_HOME here (the Keychain on Apple platforms).

let arguments = CommandLine.arguments
guard arguments.count >= 4, let baseURL = URL(string: arguments[1]) else {
  FileHandle.standardError.write(
    Data("usage: anonauth-firebase-app BASE_URL API_KEY EMAIL_PREFIX [GOOGLE_ID_TOKEN]\n".utf8))
  exit(2)
}
let apiKey = arguments[2]
let prefix = arguments[3]
let googleIDToken = arguments.count > 4 ? arguments[4] : nil
let password = "correct horse battery"

/// What the run saw, by step.
var seen: [String: Any] = [:]

/// Waits until every listener call and completion queued on the main queue so far ran.
@MainActor func settle() async {
  await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
}

/// The `NSError` fields of what `body` throws.
@MainActor func bridged(_ body: () async throws -> Void) async -> [String: Any] {
  do {
    try await body()
    return ["code": 0]
  } catch {
    let error = error as NSError
    return [
      "domain": error.domain, "code": error.code,
      "name": error.userInfo[AuthErrors.userInfoNameKey] as? String ?? "",
      "description": error.localizedDescription,
      "reason": error.userInfo[NSLocalizedFailureReasonErrorKey] as? String ?? "",
      "has_updated_credential": error.userInfo[AuthErrors.userInfoUpdatedCredentialKey] is AuthCredential,
    ]
  }
}

@MainActor func run() async throws {
  MainQueue.mark()
  Auth.configure(baseURL: baseURL, apiKey: apiKey)

  // The seed page, in both forms.
  let asyncFlow = try await runSeedFlowAsync(email: "\(prefix).async@example.com", password: password)
  seen["seed_async"] = [
    "same_uid": asyncFlow.anonymousUID == asyncFlow.linkedUID && asyncFlow.linkedUID == asyncFlow.signedInUID,
    "was_anonymous": asyncFlow.wasAnonymous, "anonymous_after_link": asyncFlow.isAnonymousAfterLink,
    "signed_out": asyncFlow.signedOutUser == nil, "deleted": asyncFlow.deleted,
  ]
  let completionFlow = try await withCheckedThrowingContinuation { continuation in
    runSeedFlowWithCompletions(email: "\(prefix).completion@example.com", password: password) {
      continuation.resume(with: $0)
    }
  }
  seen["seed_completion"] = [
    "same_uid": completionFlow.anonymousUID == completionFlow.linkedUID
      && completionFlow.linkedUID == completionFlow.signedInUID,
    "was_anonymous": completionFlow.wasAnonymous, "anonymous_after_link": completionFlow.isAnonymousAfterLink,
    "signed_out": completionFlow.signedOutUser == nil, "deleted": completionFlow.deleted,
    "on_main_thread": completionFlow.callbacksOnMainThread,
  ]

  // The auth service: the user object an app holds is updated in place by the link.
  let service = AuthService()
  service.start()
  let held = try await service.ensureSignedIn()
  let email = "\(prefix).service@example.com"
  _ = try await service.upgrade(email: email, password: password)
  seen["held_updated_in_place"] = !held.isAnonymous && held.email == email && held === Auth.auth().currentUser
  try await service.rename(to: "Ada")
  seen["held_display_name"] = held.displayName ?? ""
  seen["photo_change"] = await bridged {
    try await service.setPhoto(URL(string: "https://example.com/ada.png"))
  }
  let details = try await service.tokenDetails(forcingRefresh: true)
  seen["token_provider"] = details.provider
  seen["authorization_header"] = try await service.authorizationHeader().hasPrefix("Bearer ey")
  try await service.changePassword(email: email, current: password, new: password + "!")
  try await service.refreshProfile()
  seen["summary"] =
    service.summary().map {
      ["providers": $0.providers, "has_created": $0.created != nil, "has_refresh_token": $0.hasRefreshToken]
    } ?? [:]
  seen["password_reset"] = await bridged { try await service.sendPasswordReset(to: email) }
  seen["apple"] = await bridged {
    _ = try await service.signInWithApple(idToken: "not.an.apple.token", rawNonce: "n", fullName: nil)
  }
  seen["wrong_password"] = await bridged {
    _ = try await Auth.auth().signIn(withEmail: email, password: "not the password")
  }
  seen["wrong_password_message"] = AuthService.message(
    for: NSError(domain: AuthErrors.domain, code: AuthErrorCode.wrongPassword.rawValue))

  if let googleIDToken {
    // The email account takes the Google identity; an anonymous user who then tries to
    // link it gets credentialAlreadyInUse with the credential, and signs in with it.
    let owner = try await service.upgrade(googleIDToken: googleIDToken, accessToken: "")
    try service.signOut()
    let other = try await service.ensureSignedIn()
    seen["already_in_use"] = await bridged {
      try await other.link(with: GoogleAuthProvider.credential(withIDToken: googleIDToken, accessToken: ""))
    }
    let recovered = try await service.upgrade(googleIDToken: googleIDToken, accessToken: "")
    seen["recovered_owner"] = recovered.user.uid == owner.user.uid
  }
  await settle()
  try await service.deleteAccount()
  await settle()
  service.stop()
  seen["service_heard"] = service.heardUsers.count
  seen["service_listeners_on_main"] = service.listenersOnMainThread
  seen["service_token_changes"] = service.tokenChanges

  // The Swift 6 view model.
  let model = AccountViewModel()
  model.onAppear()
  await model.continueAsGuest()
  await settle()
  seen["model_guest"] = model.isGuest && model.user != nil
  await model.saveAccount(email: "\(prefix).model@example.com", password: password)
  await settle()
  seen["model_saved"] = !model.isGuest && model.user === Auth.auth().currentUser
  // A restart: the default store gives the user back.
  let restarted = Auth(baseURL: baseURL, apiKey: apiKey)
  seen["restart_same_uid"] = restarted.currentUser?.uid == model.user?.uid
  try await Auth.auth().currentUser?.delete()
  await settle()
  seen["model_signed_out"] = model.user == nil
  seen["model_listener_on_main"] = model.listenerOnMainThread
  seen["model_error"] = model.errorMessage ?? ""
  model.onDisappear()

  if let mailDirectory = ProcessInfo.processInfo.environment["ANONAUTH_MAIL_DIR"] {
    try await emailActions(mailDirectory: mailDirectory)
  }
}

/// The newest link of `mode` mailed to `address`: a --dev daemon writes each mail into
/// its data dir (`ANONAUTH_MAIL_DIR`), where the mail worker puts it shortly after the send.
func mailedLink(_ directory: String, to address: String, mode: String) async throws -> String {
  for _ in 0..<600 {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    var found: String?
    for name in names where name.hasSuffix(".eml") {
      guard let text = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8),
        text.contains("To: \(address)\n")
      else { continue }
      for word in text.split(whereSeparator: \.isWhitespace) where word.contains("mode=\(mode)&") {
        found = String(word)
      }
    }
    if let found { return found }
    try await Task.sleep(for: .milliseconds(50))
  }
  throw URLError(.timedOut)
}

/// The email actions, as an app written to FirebaseAuth runs them against the daemon: an
/// anonymous user upgraded by a sign-in link keeps its uid; a password reset from the
/// mailed link; the code refused once used.
@MainActor func emailActions(mailDirectory: String) async throws {
  try Auth.auth().signOut()
  let guest = try await Auth.auth().signInAnonymously().user
  let address = "\(prefix).link@example.com"
  let settings = ActionCodeSettings()
  settings.url = URL(string: "http://localhost/finish")
  settings.handleCodeInApp = true
  try await Auth.auth().sendSignInLink(toEmail: address, actionCodeSettings: settings)
  let link = try await mailedLink(mailDirectory, to: address, mode: "signIn")
  seen["email_link_recognized"] = Auth.auth().isSignIn(withEmailLink: link)
  let linked = try await guest.link(with: EmailAuthProvider.credential(withEmail: address, link: link))
  seen["email_link_upgrade"] = [
    "same_uid": linked.user.uid == guest.uid, "same_object": linked.user === guest,
    "anonymous": guest.isAnonymous, "email": guest.email ?? "", "verified": guest.isEmailVerified,
  ]
  try await Auth.auth().sendPasswordReset(withEmail: address)
  let resetLink = try await mailedLink(mailDirectory, to: address, mode: "resetPassword")
  let code =
    URLComponents(string: resetLink)?.queryItems?.first(where: { $0.name == "oobCode" })?.value ?? ""
  seen["reset_code_email"] = try await Auth.auth().verifyPasswordResetCode(code)
  try await Auth.auth().confirmPasswordReset(withCode: code, newPassword: "reset " + password)
  let again = try await Auth.auth().signIn(withEmail: address, password: "reset " + password)
  seen["reset_same_uid"] = again.user.uid == guest.uid
  seen["reset_code_reused"] = await bridged {
    try await Auth.auth().confirmPasswordReset(withCode: code, newPassword: "another " + password)
  }
  try await Auth.auth().currentUser?.delete()
}

@MainActor func main() async {
  do {
    try await run()
  } catch {
    seen["failed"] = "\(error)"
  }
  if let output = try? JSONSerialization.data(withJSONObject: seen, options: [.sortedKeys]) {
    print(String(decoding: output, as: UTF8.self))
  }
  exit(seen["failed"] == nil ? 0 : 1)
}

await main()
