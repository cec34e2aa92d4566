import Foundation
import Synchronization
import Testing

@testable import AnonAuthClient

/// What code written to FirebaseAuth's API relies on: errors that read as Firebase's
/// `NSError`s, one `User` object updated in place, listeners and completions called
/// asynchronously on the callback queue, and the ID token's claims.
@Suite struct FirebaseShapeTests {
  @Test func errorsBridgeToFirebasesNSError() async throws {
    let stub = StubServer.anonymousU1()
    stub.on(
      "accounts:signInWithIdp",
      #"{"errorMessage":"FEDERATED_USER_ID_ALREADY_LINKED","providerId":"google.com","oauthIdToken":"g-token","#
        + #""email":"owner@example.com"}"#)
    let auth = stub.auth()
    let user = try await auth.signInAnonymously().user
    var caught: (any Error)?
    do {
      try await user.link(
        with: GoogleAuthProvider.credential(withIDToken: "g-token", accessToken: "g-access"))
    } catch {
      caught = error
    }
    let error = try #require(caught) as NSError
    #expect(error.domain == "FIRAuthErrorDomain")
    #expect(error.code == 17025)
    #expect(AuthErrorCode(rawValue: error.code) == .credentialAlreadyInUse)
    #expect(error.userInfo[AuthErrors.userInfoNameKey] as? String == "ERROR_CREDENTIAL_ALREADY_IN_USE")
    #expect(error.userInfo[AuthErrors.userInfoEmailKey] as? String == "owner@example.com")
    #expect(error.localizedDescription == AuthErrorCode.credentialAlreadyInUse.explanation)
    let updated = try #require(error.userInfo[AuthErrors.userInfoUpdatedCredentialKey] as? OAuthCredential)
    #expect(
      updated.provider == "google.com" && updated.idToken == "g-token" && updated.accessToken == "g-access")
  }

  @Test func theCodesNamesAreFirebases() {
    #expect(AuthErrorCode.invalidAPIKey.name == "ERROR_INVALID_API_KEY")
    #expect(AuthErrorCode.emailAlreadyInUse.name == "ERROR_EMAIL_ALREADY_IN_USE")
    #expect(AuthErrorCode.malformedJWT.name == "ERROR_MALFORMED_JWT")
    #expect(AuthErrorCode.tenantIDMismatch.name == "ERROR_TENANT_ID_MISMATCH")
    #expect(AuthErrorCode.networkError.name == "ERROR_NETWORK_REQUEST_FAILED")
    #expect(AuthErrorCode.networkError.rawValue == 17020 && AuthErrorCode.internalError.rawValue == 17999)
  }

  @Test func theUserAnAppHoldsIsUpdatedInPlaceByALinkAndAReload() async throws {
    let stub = StubServer.anonymousU1()
    stub.on("accounts:signUp", StubServer.signIn(uid: "u1", idToken: "id-2", refreshToken: "refresh-2"))
    stub.on("accounts:lookup", StubServer.lookup(uid: "u1", email: "a@example.com", providers: ["password"]))
    stub.on(
      "accounts:lookup",
      #"{"users":[{"localId":"u1","email":"a@example.com","emailVerified":true,"displayName":"Ada","#
        + #""createdAt":"1700000000000","lastLoginAt":"1700000500000","#
        + #""providerUserInfo":[{"providerId":"password","rawId":"a@example.com"}]}]}"#)
    let auth = stub.auth()
    let held = try await auth.signInAnonymously().user
    #expect(held === auth.currentUser)

    let linked = try await held.link(
      with: EmailAuthProvider.credential(withEmail: "a@example.com", password: "pw"))
    #expect(linked.user === held)
    #expect(held.isAnonymous == false && held.email == "a@example.com")
    #expect(held.providerData.map(\.providerID) == ["password"])
    #expect(held.refreshToken == "refresh-2")

    try await held.reload()
    #expect(held.displayName == "Ada" && held.isEmailVerified)
    #expect(held.metadata.creationDate == Date(timeIntervalSince1970: 1_700_000_000))
    #expect(held.metadata.lastSignInDate == Date(timeIntervalSince1970: 1_700_000_500))
    #expect(held == auth.currentUser)
  }

  @Test func listenersAndCompletionsRunLaterOnTheCallbackQueue() async throws {
    let stub = StubServer.anonymousU1()
    stub.on("token", #"{"id_token":"id-2","refresh_token":"refresh-2","expires_in":"3600"}"#)
    let auth = stub.auth()
    let key = DispatchSpecificKey<Bool>()
    auth.callbackQueue.setSpecific(key: key, value: true)
    let states = Mutex<[String]>([])
    let tokens = Mutex<[String]>([])
    let offQueue = Mutex(0)

    auth.callbackQueue.suspend()
    auth.addStateDidChangeListener { _, user in
      if DispatchQueue.getSpecific(key: key) != true { offQueue.withLock { $0 += 1 } }
      states.withLock { $0.append(user?.uid ?? "nil") }
    }
    auth.addIDTokenDidChangeListener { _, user in tokens.withLock { $0.append(user?.uid ?? "nil") } }
    #expect(states.withLock { $0 }.isEmpty)
    auth.callbackQueue.resume()

    let result: AuthDataResult = try await withCheckedThrowingContinuation { continuation in
      auth.signInAnonymously { result, error in
        if DispatchQueue.getSpecific(key: key) != true { offQueue.withLock { $0 += 1 } }
        if let result {
          continuation.resume(returning: result)
        } else {
          continuation.resume(throwing: error!)
        }
      }
    }
    _ = try await result.user.getIDToken(forcingRefresh: true)
    try auth.signOut()
    auth.drain()
    #expect(states.withLock { $0 } == ["nil", "u1", "nil"])
    #expect(tokens.withLock { $0 } == ["nil", "u1", "u1", "nil"])
    #expect(offQueue.withLock { $0 } == 0)
  }

  @Test func theIDTokenResultReadsTheClaims() async throws {
    let payload =
      #"{"sub":"u1","iat":1700000000,"exp":1700003600,"auth_time":1699990000,"#
      + #""role":"admin","firebase":{"sign_in_provider":"anonymous"}}"#
    let body = Data(payload.utf8).base64EncodedString()
      .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_")
    let jwt = "eyJhbGciOiJSUzI1NiJ9.\(body).c2ln"
    let stub = StubServer()
    stub.on("accounts:signUp", StubServer.signIn(uid: "u1", idToken: jwt))
    stub.on("accounts:lookup", StubServer.lookup(uid: "u1"))
    let auth = stub.auth()
    let user = try await auth.signInAnonymously().user
    let result = try await user.getIDTokenResult()
    #expect(result.token == jwt)
    #expect(result.signInProvider == "anonymous")
    #expect(result.claims["role"] as? String == "admin")
    #expect(result.expirationDate == Date(timeIntervalSince1970: 1_700_003_600))
    #expect(result.issuedAtDate == Date(timeIntervalSince1970: 1_700_000_000))
    #expect(result.authDate == Date(timeIntervalSince1970: 1_699_990_000))
  }
}

extension FirebaseShapeTests {
  @Test func reauthenticationChecksTheUserAndAPasswordChangeKeepsTheNewTokens() async throws {
    let stub = StubServer()
    stub.on("accounts:signInWithPassword", StubServer.signIn(uid: "u1"))
    stub.on("accounts:lookup", StubServer.lookup(uid: "u1", email: "a@example.com", providers: ["password"]))
    stub.on("accounts:signInWithPassword", StubServer.signIn(uid: "u2"))
    stub.on(
      "accounts:update", #"{"localId":"u1","idToken":"id-3","refreshToken":"refresh-3","expiresIn":"3600"}"#)
    stub.on("accounts:lookup", StubServer.lookup(uid: "u1", email: "a@example.com", providers: ["password"]))
    let auth = stub.auth()
    let user = try await auth.signIn(withEmail: "a@example.com", password: "pw").user

    var caught: (any Error)?
    do {
      try await user.reauthenticate(
        with: EmailAuthProvider.credential(withEmail: "b@example.com", password: "pw"))
    } catch {
      caught = error
    }
    #expect((try #require(caught) as NSError).code == AuthErrorCode.userMismatch.rawValue)
    #expect(auth.currentUser === user)

    try await user.updatePassword(to: "new password")
    let update = try #require(stub.seen.last { $0.method == "accounts:update" })
    #expect(
      update.json["password"] as? String == "new password" && update.json["idToken"] as? String == "id-1")
    #expect(user.refreshToken == "refresh-3")
    #expect(try await user.getIDToken() == "id-3")
  }

  @Test func authStateChangesStartsWithTheCurrentUser() async throws {
    let stub = StubServer.anonymousU1()
    let auth = stub.auth()
    var changes = auth.authStateChanges.makeAsyncIterator()
    #expect(await changes.next() == .some(nil))
    try await auth.signInAnonymously()
    #expect(await changes.next()??.uid == "u1")
  }
}

extension FirebaseShapeTests {
  @Test func anAuthAndItsUserDoNotKeepEachOtherAlive() async throws {
    let stub = StubServer.anonymousU1()
    weak var gone: Auth?
    var user: User?
    do {
      let auth = stub.auth()
      gone = auth
      user = try await auth.signInAnonymously().user
    }
    #expect(gone == nil)
    #expect(user?.uid == "u1")
    let error = await #expect(throws: AuthError.self) { try await user?.getIDToken() }
    #expect(error?.code == .nullUser)
  }
}
