// App code written to FirebaseAuth 12's public API. The only line that differs from the
// FirebaseAuth build of this file is the import below (`import FirebaseAuth`).
import AnonAuthClient
import Foundation

/// What the seed page's flow saw, for the runner to report.
public struct SeedOutcome: Sendable {
  public var anonymousUID = ""
  public var wasAnonymous = false
  public var linkedUID = ""
  public var isAnonymousAfterLink = true
  public var signedInUID = ""
  public var signedOutUser: String?
  public var deleted = false
  public var callbacksOnMainThread = true
}

/// The seed page's flow with async/await: sign in anonymously, link an email and a
/// password (the same uid, now permanent), sign out, sign in again, delete.
public func runSeedFlowAsync(email: String, password: String) async throws -> SeedOutcome {
  var outcome = SeedOutcome()
  let authResult = try await Auth.auth().signInAnonymously()
  let user = authResult.user
  outcome.anonymousUID = user.uid
  outcome.wasAnonymous = user.isAnonymous

  let credential = EmailAuthProvider.credential(withEmail: email, password: password)
  let linked = try await user.link(with: credential)
  outcome.linkedUID = linked.user.uid
  outcome.isAnonymousAfterLink = user.isAnonymous

  try Auth.auth().signOut()
  outcome.signedOutUser = Auth.auth().currentUser?.uid

  let again = try await Auth.auth().signIn(withEmail: email, password: password)
  outcome.signedInUID = again.user.uid
  try await again.user.delete()
  outcome.deleted = Auth.auth().currentUser == nil
  return outcome
}

/// The same flow in the page's completion-handler forms. `completion` runs on the main
/// queue, where FirebaseAuth calls completion handlers.
public func runSeedFlowWithCompletions(
  email: String, password: String, completion: @escaping (Result<SeedOutcome, Error>) -> Void
) {
  var outcome = SeedOutcome()
  func note() { outcome.callbacksOnMainThread = outcome.callbacksOnMainThread && MainQueue.isCurrent }
  Auth.auth().signInAnonymously { authResult, error in
    note()
    guard let user = authResult?.user else { return completion(.failure(error ?? SeedError.noResult)) }
    outcome.anonymousUID = user.uid
    outcome.wasAnonymous = user.isAnonymous
    let credential = EmailAuthProvider.credential(withEmail: email, password: password)
    user.link(with: credential) { authResult, error in
      note()
      guard let linked = authResult else { return completion(.failure(error ?? SeedError.noResult)) }
      outcome.linkedUID = linked.user.uid
      outcome.isAnonymousAfterLink = user.isAnonymous
      do {
        try Auth.auth().signOut()
      } catch {
        return completion(.failure(error))
      }
      outcome.signedOutUser = Auth.auth().currentUser?.uid
      Auth.auth().signIn(withEmail: email, password: password) { authResult, error in
        note()
        guard let again = authResult else { return completion(.failure(error ?? SeedError.noResult)) }
        outcome.signedInUID = again.user.uid
        again.user.delete { error in
          note()
          if let error { return completion(.failure(error)) }
          outcome.deleted = Auth.auth().currentUser == nil
          completion(.success(outcome))
        }
      }
    }
  }
}

/// A completion handler called with neither a result nor an error.
public enum SeedError: Error {
  case noResult
}
