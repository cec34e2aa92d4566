import Foundation

extension Auth {
  // FirebaseAuth's passwordless email links and the rest of the email actions.

  /// Asks the server to mail a password-reset link that leads on to `actionCodeSettings`.
  public func sendPasswordReset(withEmail email: String, actionCodeSettings: ActionCodeSettings) async throws
  {
    _ = try await rest.accounts(
      "sendOobCode", OobCodeBody(requestType: "PASSWORD_RESET", email: email, settings: actionCodeSettings),
      as: EmptyReply.self)
  }

  /// Asks the server to mail a sign-in link to `email`; `actionCodeSettings` needs a `url`
  /// and `handleCodeInApp`.
  /// - Throws: `.unauthorizedDomain`, `.invalidContinueURI`, `.invalidEmail`.
  public func sendSignInLink(toEmail email: String, actionCodeSettings: ActionCodeSettings) async throws {
    _ = try await rest.accounts(
      "sendOobCode", OobCodeBody(requestType: "EMAIL_SIGNIN", email: email, settings: actionCodeSettings),
      as: EmptyReply.self)
  }

  /// Whether `link` is a sign-in link (its query, or its `link` parameter's, has
  /// `mode=signIn` and an `oobCode`), as FirebaseAuth checks it.
  public func isSignIn(withEmailLink link: String) -> Bool {
    Self.signInCode(link) != nil
  }

  /// The `oobCode` of a sign-in link, also when the link is wrapped in another one's
  /// `link` or `deep_link_id` parameter.
  static func signInCode(_ link: String) -> String? {
    guard let items = URLComponents(string: link)?.queryItems else { return nil }
    var values: [String: String] = [:]
    for item in items where values[item.name] == nil { values[item.name] = item.value ?? "" }
    if values["mode"] == "signIn", let code = values["oobCode"], !code.isEmpty { return code }
    for wrapper in ["link", "deep_link_id"] {
      if let inner = values[wrapper], inner != link, let code = signInCode(inner) { return code }
    }
    return nil
  }

  /// Signs in with the email a sign-in link was sent to and the link; the first sign-in
  /// makes the account.
  /// - Throws: `.invalidActionCode` (used, replaced, or not a sign-in link), `.expiredActionCode`,
  ///   `.invalidEmail` (another address than the link's).
  @discardableResult
  public func signIn(withEmail email: String, link: String) async throws -> AuthDataResult {
    guard let code = Self.signInCode(link) else {
      throw AuthError(.invalidActionCode, message: "not a sign-in link")
    }
    let reply = try await rest.accounts(
      "signInWithEmailLink", EmailLinkBody(email: email, oobCode: code), as: SignInReply.self)
    return try await adopt(reply, providerID: EmailAuthProvider.id, isNewUser: reply.isNewUser ?? false)
  }

  /// What an action code is for, and for which address, without using it.
  public func checkActionCode(_ code: String) async throws -> ActionCodeInfo {
    let reply = try await rest.accounts(
      "resetPassword", ResetPasswordBody(oobCode: code), as: ActionCodeReply.self)
    let operation = ActionCodeOperation(requestType: reply.requestType)
    if operation == .verifyAndChangeEmail {
      return ActionCodeInfo(operation: operation, email: reply.newEmail ?? "", previousEmail: reply.email)
    }
    return ActionCodeInfo(operation: operation, email: reply.email ?? "", previousEmail: nil)
  }
}

extension User {
  /// Asks the server to mail a link to `newEmail` that, once followed, verifies it and
  /// makes it this user's email (FirebaseAuth's `sendEmailVerification(beforeUpdatingEmail:)`).
  /// - Throws: `.requiresRecentLogin`, `.emailAlreadyInUse`, `.invalidEmail`.
  public func sendEmailVerification(
    beforeUpdatingEmail newEmail: String, actionCodeSettings: ActionCodeSettings? = nil
  ) async throws {
    let auth = try self.auth
    try await auth.withIDToken(of: uid) { token throws(AuthError) in
      _ = try await auth.rest.accounts(
        "sendOobCode",
        OobCodeBody(
          requestType: "VERIFY_AND_CHANGE_EMAIL", idToken: token, newEmail: newEmail,
          settings: actionCodeSettings),
        as: EmptyReply.self)
    }
  }
}

extension Auth {
  // The completion forms, as FirebaseAuth has them (called on the callback queue).

  public func sendSignInLink(
    toEmail email: String, actionCodeSettings: ActionCodeSettings, completion: (((any Error)?) -> Void)? = nil
  ) {
    deliver(completion) {
      try await self.sendSignInLink(toEmail: email, actionCodeSettings: actionCodeSettings)
    }
  }

  public func signIn(
    withEmail email: String, link: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil
  ) {
    deliver(completion) { try await self.signIn(withEmail: email, link: link) }
  }

  public func checkActionCode(_ code: String, completion: @escaping (ActionCodeInfo?, (any Error)?) -> Void) {
    deliver(completion) { try await self.checkActionCode(code) }
  }
}
