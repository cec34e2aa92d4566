/// FirebaseAuth's `AuthErrors`: the error domain and the `userInfo` keys of the `NSError`
/// every `AuthError` bridges to.
public enum AuthErrors {
  /// The domain of `(error as NSError)`, as FirebaseAuth's.
  public static let domain = "FIRAuthErrorDomain"
  /// The code's short name (`ERROR_CREDENTIAL_ALREADY_IN_USE`).
  public static let userInfoNameKey = "FIRAuthErrorUserInfoNameKey"
  /// The email of the account that already exists, with `.emailAlreadyInUse` and
  /// `.credentialAlreadyInUse` when the server said it.
  public static let userInfoEmailKey = "FIRAuthErrorUserInfoEmailKey"
  /// The credential to sign in with instead, after `.credentialAlreadyInUse`.
  public static let userInfoUpdatedCredentialKey = "FIRAuthErrorUserInfoUpdatedCredentialKey"
}
