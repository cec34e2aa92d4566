import Synchronization

/// Where the process is in its life, read by health checks and `/readyz`.
public final class ServingState: Sendable {
  public enum Phase: UInt8, Sendable {
    case starting, serving, draining
  }

  private let phase = Atomic<UInt8>(Phase.starting.rawValue)

  public init() {}

  public var current: Phase { Phase(rawValue: phase.load(ordering: .acquiring)) ?? .draining }

  public func set(_ new: Phase) { phase.store(new.rawValue, ordering: .releasing) }

  public var isServing: Bool { current == .serving }
}
