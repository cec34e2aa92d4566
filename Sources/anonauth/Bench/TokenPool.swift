import AnonAuthWire
import Synchronization

/// Values lent to one call at a time, each handed back (changed or not) when the call
/// ends: a refresh family's current token, a page walk's next page token.
final class Lender: Sendable {
  private let free: Mutex<[String]>

  init(_ values: [String]) { free = Mutex(values) }

  func borrow() -> String? { free.withLock { $0.popLast() } }

  func giveBack(_ value: String) { free.withLock { $0.insert(value, at: 0) } }
}

/// Refresh tokens of many token families, lent to one call at a time: a refresh rotates
/// its family's token, and the next refresh of that family must present the new one.
final class TokenPool: Sendable {
  private let lender: Lender

  init(_ tokens: [String]) { lender = Lender(tokens) }

  func borrow() -> String? { lender.borrow() }

  func giveBack(_ token: String) { lender.giveBack(token) }

  /// A RefreshToken call for a borrowed family; its reply's token goes back to the pool
  /// (or the old one, if the call failed). Nil when every family is in flight.
  func refreshCall(_ metadata: [String: String]) -> BenchCall? {
    guard let token = borrow() else { return nil }
    return BenchCall(
      method: AccountServiceMethods.refreshToken.path,
      payload: RefreshTokenRequest(refreshToken: token).serializedBytes(), metadata: metadata,
      kind: "refresh",
      onSuccess: { [self] bytes in
        giveBack((try? AuthResponse(serializedBytes: bytes))?.refreshToken ?? token)
      },
      onFailure: { [self] in giveBack(token) })
  }
}
