// App code written to FirebaseAuth 12's public API. The only line that differs from the
// FirebaseAuth build of this file is the import below (`@preconcurrency import
// FirebaseAuth`: FirebaseAuth's Auth, User and AuthDataResult are not Sendable, so Swift 6
// main-actor code imports it so; AnonAuthClient's types are, and the attribute changes
// nothing here).
@preconcurrency import AnonAuthClient
import Foundation
import Observation

/// A Swift 6 view model: main-actor state assigned from FirebaseAuth's listener, which
/// FirebaseAuth calls on the main queue.
@available(iOS 17, macOS 14, *)
@MainActor @Observable public final class AccountViewModel {
  public private(set) var user: User?
  public private(set) var isGuest = true
  public private(set) var errorMessage: String?
  /// True while every listener call came on the main thread.
  public private(set) var listenerOnMainThread = true
  @ObservationIgnored private var handle: NSObjectProtocol?

  public init() {}

  public func onAppear() {
    handle = Auth.auth().addStateDidChangeListener { [weak self] _, user in
      guard let self else { return }
      self.listenerOnMainThread = self.listenerOnMainThread && MainQueue.isCurrent
      self.user = user
      self.isGuest = user?.isAnonymous ?? true
    }
  }

  public func onDisappear() {
    if let handle { Auth.auth().removeStateDidChangeListener(handle) }
    handle = nil
  }

  public func continueAsGuest() async {
    do {
      try await Auth.auth().signInAnonymously()
    } catch {
      errorMessage = AuthService.message(for: error)
    }
  }

  public func saveAccount(email: String, password: String) async {
    guard let user else { return }
    do {
      try await user.link(with: EmailAuthProvider.credential(withEmail: email, password: password))
      // The same object, updated in place: no need to read `currentUser` again.
      isGuest = user.isAnonymous
    } catch {
      errorMessage = AuthService.message(for: error)
    }
  }

  public func signOut() {
    do {
      try Auth.auth().signOut()
    } catch {
      errorMessage = AuthService.message(for: error)
    }
  }
}
