import Synchronization

/// Where the process is in its life, read by health checks and `/readyz`.
public final class ServingState: Sendable {
  public enum Phase: UInt8, Sendable {
    case starting, serving, draining
  }

  private let phase = Atomic<UInt8>(Phase.starting.rawValue)
  /// Who wants to hear of each change (gRPC health `Watch` streams), by the id
  /// `observe` gave them. Reads of `current` stay a lock-free atomic load.
  private let observers = Mutex<(next: UInt64, handlers: [UInt64: @Sendable (Phase) -> Void])>((0, [:]))

  public init() {}

  public var current: Phase { Phase(rawValue: phase.load(ordering: .acquiring)) ?? .draining }

  /// Stores the phase, then calls every observer with it (outside the lock, on the
  /// caller's thread), so a watcher hears of the drain before the server closes anything.
  public func set(_ new: Phase) {
    phase.store(new.rawValue, ordering: .releasing)
    let handlers = observers.withLock { Array($0.handlers.values) }
    for handler in handlers { handler(new) }
  }

  public var isServing: Bool { current == .serving }

  /// Calls `handler` with each new phase from now on, until `stopObserving` with the id
  /// returned. The handler must be quick and must not call back into this object.
  public func observe(_ handler: @escaping @Sendable (Phase) -> Void) -> UInt64 {
    observers.withLock {
      let id = $0.next
      $0.next += 1
      $0.handlers[id] = handler
      return id
    }
  }

  public func stopObserving(_ id: UInt64) {
    _ = observers.withLock { $0.handlers.removeValue(forKey: id) }
  }
}
