/// Where a connection charges the memory it holds for frames not yet complete, so that a
/// budget shared by many connections (the process's, the peer address's) bounds what
/// peers that announce large frames and trickle their bytes can make the server hold.
/// Called on the connection's loop thread.
public protocol ReceiveCharge: AnyObject {
  /// Moves the connection's charge to `bytes`. Shrinking always succeeds; growing
  /// returns false, and changes nothing, when it would take a budget over its limit.
  func resize(to bytes: Int) -> Bool
}
