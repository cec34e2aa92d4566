import AnonAuthNet
import Synchronization

/// Whether a connection can take new calls, readable from any thread.
final class ConnectionFlags: Sendable {
  private let unusable = Atomic<Bool>(false)
  func markUnusable() { unusable.store(true, ordering: .releasing) }
  var isUsable: Bool { !unusable.load(ordering: .acquiring) }
}

/// A client connection as other threads see it: its loop-bound self plus its flags.
struct ConnectionHandle: Sendable {
  let bound: LoopBound<ClientConnection>
  let flags: ConnectionFlags

  var id: ObjectIdentifier { bound.id }
  var isUsable: Bool { flags.isUsable }

  func execute(_ body: @escaping @Sendable (ClientConnection) -> Void) { bound.execute(body) }
}
