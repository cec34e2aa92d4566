import AnonAuthClient
import Foundation

/// The seed's flow with AnonAuthClient against a running daemon's HTTPS API, as an app
/// would run it: anonymous sign-in, link email and password, sign out, sign in again,
/// a restart from the session file, a forced refresh, errors, delete. It prints what it
/// saw as one JSON object; Tests/Interop/test_swift_client.py runs it and checks it.
///
///     anonauth-seed-flow BASE_URL API_KEY EMAIL SESSION_FILE
///
/// An `http://host:port` BASE_URL is an emulator listener: every `Auth` is pointed at it
/// with `useEmulator(withHost:port:)`, as an app in development would be.

let arguments = CommandLine.arguments
guard arguments.count == 5, let baseURL = URL(string: arguments[1]) else {
  FileHandle.standardError.write(Data("usage: anonauth-seed-flow BASE_URL API_KEY EMAIL SESSION_FILE\n".utf8))
  exit(2)
}
let apiKey = arguments[2]
let email = arguments[3]
let store = FileSessionStore(path: arguments[4])
let password = "correct horse battery"

/// An `Auth` of the flow, pointed at the emulator listener when BASE_URL is plain HTTP.
func makeAuth(_ auth: Auth) -> Auth {
  if baseURL.scheme == "http", let host = baseURL.host, let port = baseURL.port {
    auth.useEmulator(withHost: host, port: port)
  }
  return auth
}

/// What the flow saw, by step.
var seen: [String: Any] = [:]
/// The uids the state listener heard ("nil" when signed out).
let heard = HeardUsers()

/// The code of the error `body` throws, or "none".
@MainActor func code(_ body: () async throws -> Void) async -> String {
  do {
    try await body()
    return "none"
  } catch let error as AuthError {
    return "\(error.code)"
  } catch {
    return "\(error)"
  }
}

/// The flow. In a function rather than at the top level: top-level code picks the
/// completion-handler overloads (`signInAnonymously(completion:)`) over the async ones,
/// with FirebaseAuth as here.
@MainActor func flow() async {
  do {
    let auth = makeAuth(Auth.configure(baseURL: baseURL, apiKey: apiKey, sessionStore: store))
    // This program runs no main queue: listeners are called on a queue of its own.
    let callbacks = DispatchQueue(label: "seed-flow-callbacks")
    auth.callbackQueue = callbacks
    let handle = Auth.auth().addStateDidChangeListener { _, user in heard.append(user?.uid ?? "nil") }

    // The seed: sign in anonymously, then make the account permanent with the same uid.
    let anonymous = try await Auth.auth().signInAnonymously()
    seen["anonymous_uid"] = anonymous.user.uid
    seen["anonymous_is_anonymous"] = anonymous.user.isAnonymous
    seen["anonymous_is_new_user"] = anonymous.additionalUserInfo?.isNewUser ?? false
    let firstToken = try await anonymous.user.getIDToken()
    seen["first_token_parts"] = firstToken.split(separator: ".").count

    let credential = EmailAuthProvider.credential(withEmail: email, password: password)
    let linked = try await anonymous.user.link(with: credential)
    seen["linked_uid"] = linked.user.uid
    seen["linked_is_anonymous"] = linked.user.isAnonymous
    seen["linked_email"] = linked.user.email ?? ""
    seen["linked_providers"] = linked.user.providerData.map(\.providerID)

    // Another device cannot take the email.
    let other = makeAuth(Auth(baseURL: baseURL, apiKey: apiKey))
    let otherUser = try await other.signInAnonymously().user
    seen["email_taken"] = await code { _ = try await otherUser.link(with: credential) }
    seen["weak_password"] = await code {
      _ = try await other.createUser(withEmail: "weak-" + email, password: "1")
    }

    try Auth.auth().signOut()
    seen["signed_out_user"] = Auth.auth().currentUser?.uid ?? "nil"
    seen["wrong_password"] = await code {
      _ = try await auth.signIn(withEmail: email, password: "wrong password")
    }
    let again = try await Auth.auth().signIn(withEmail: email, password: password)
    seen["signed_in_uid"] = again.user.uid
    seen["signed_in_is_new_user"] = again.additionalUserInfo?.isNewUser ?? true

    // A restart: the session comes back from the file, and refreshes.
    let restarted = makeAuth(
      Auth(baseURL: baseURL, apiKey: apiKey, sessionStore: FileSessionStore(path: arguments[4])))
    let before = (try? store.load())?.refreshToken ?? ""
    let user = restarted.currentUser
    seen["restarted_uid"] = user?.uid ?? "nil"
    let oldToken = try await user?.getIDToken() ?? ""
    let newToken = try await user?.getIDToken(forcingRefresh: true) ?? ""
    seen["refresh_changed_id_token"] = !newToken.isEmpty && newToken != oldToken
    seen["refresh_rotated_refresh_token"] = ((try? store.load())?.refreshToken ?? before) != before
    seen["still_signed_in_after_refresh"] = restarted.currentUser?.uid ?? "nil"

    // Delete: signed out, and the email no longer signs in.
    try await restarted.currentUser?.delete()
    seen["deleted_user"] = restarted.currentUser?.uid ?? "nil"
    seen["sign_in_after_delete"] = await code {
      _ = try await auth.signIn(withEmail: email, password: password)
    }
    // The first Auth still holds the deleted user's session: its next refresh is refused
    // and signs it out, as Firebase's SDKs do.
    let stale = Auth.auth().currentUser
    seen["stale_refresh"] = await code { _ = try await stale?.getIDToken(forcingRefresh: true) }
    seen["stale_signed_out"] = Auth.auth().currentUser == nil
    try await otherUser.delete()

    Auth.auth().removeStateDidChangeListener(handle)
    callbacks.sync {}
    seen["listener_heard"] = heard.uids
    seen["wrong_key"] = await code {
      _ = try await makeAuth(Auth(baseURL: baseURL, apiKey: "not-a-key", sessionStore: MemorySessionStore()))
        .signInAnonymously()
    }
  } catch {
    seen["failed"] = "\(error)"
  }
}

await flow()

let output = try JSONSerialization.data(withJSONObject: seen, options: [.sortedKeys])
print(String(decoding: output, as: UTF8.self))
exit(seen["failed"] == nil ? 0 : 1)
