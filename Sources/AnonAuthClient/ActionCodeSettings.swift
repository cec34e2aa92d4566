import Foundation

/// Where an email action's link leads and whether the app opens it, as FirebaseAuth's
/// `ActionCodeSettings`: the `url` (the `continueUrl`, on one of the project's authorized
/// domains), `handleCodeInApp` (required for sign-in links), the iOS bundle id and the
/// Android package.
///
/// `@unchecked Sendable`, as FirebaseAuth's class is used: set it up, then hand it to one
/// call; the properties are plain values.
public final class ActionCodeSettings: @unchecked Sendable {
  public var url: URL?
  public var handleCodeInApp = false
  public private(set) var iOSBundleID: String?
  public private(set) var androidPackageName: String?
  public private(set) var androidMinimumVersion: String?
  public private(set) var androidInstallIfNotAvailable = false
  /// Firebase Hosting's custom link domain: carried for source compatibility, unused.
  public var linkDomain: String?

  public init() {}

  public func setIOSBundleID(_ bundleID: String) { iOSBundleID = bundleID }

  public func setAndroidPackageName(_ name: String, installIfNotAvailable: Bool, minimumVersion: String?) {
    androidPackageName = name
    androidInstallIfNotAvailable = installIfNotAvailable
    androidMinimumVersion = minimumVersion
  }
}

/// What an action code is for (FirebaseAuth's `ActionCodeOperation`).
public enum ActionCodeOperation: Int, Sendable {
  case unknown = 0
  case passwordReset = 1
  case verifyEmail = 2
  case recoverEmail = 3
  case emailLink = 4
  case verifyAndChangeEmail = 5
  case revertSecondFactorAddition = 6

  init(requestType: String?) {
    switch requestType {
    case "PASSWORD_RESET": self = .passwordReset
    case "VERIFY_EMAIL": self = .verifyEmail
    case "RECOVER_EMAIL": self = .recoverEmail
    case "EMAIL_SIGNIN": self = .emailLink
    case "VERIFY_AND_CHANGE_EMAIL": self = .verifyAndChangeEmail
    default: self = .unknown
    }
  }
}

/// What `Auth.checkActionCode(_:)` answers (FirebaseAuth's `ActionCodeInfo`).
public struct ActionCodeInfo: Sendable, Equatable {
  public let operation: ActionCodeOperation
  /// The address the code was sent to; for an email change, the new one.
  public let email: String
  /// For an email change, the address it replaces.
  public let previousEmail: String?
}
