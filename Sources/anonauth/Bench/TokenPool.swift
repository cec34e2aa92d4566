import AnonAuthWire
import Synchronization

/// Refresh tokens of many token families, lent to one call at a time: a refresh rotates
/// its family's token, and the next refresh of that family must present the new one.
final class TokenPool: Sendable {
  private let free: Mutex<[String]>

  init(_ tokens: [String]) { free = Mutex(tokens) }

  func borrow() -> String? { free.withLock { $0.popLast() } }

  func giveBack(_ token: String) { free.withLock { $0.insert(token, at: 0) } }

  /// A RefreshToken call for a borrowed family; its reply's token goes back to the pool
  /// (or the old one, if the call failed). Nil when every family is in flight.
  func refreshCall(_ metadata: [String: String]) -> BenchCall? {
    guard let token = borrow() else { return nil }
    return BenchCall(
      method: "/anonauth.v1.AccountService/RefreshToken",
      payload: RefreshTokenRequest(refreshToken: token).serializedBytes(), metadata: metadata,
      kind: "refresh",
      onSuccess: { [self] bytes in
        giveBack((try? AuthResponse(serializedBytes: bytes))?.refreshToken ?? token)
      },
      onFailure: { [self] in giveBack(token) })
  }
}
