import AnonAuthDqlite
import AnonAuthService
import CShims
import Foundation
import Synchronization

/// Watches the cluster from this node, on a thread of its own (the dqlite client blocks):
/// whether a leader is reachable (`/readyz`), whether this node leads (the clean-up
/// worker runs on the leader's daemon only), and the members with their roles
/// (`anonauth admin cluster`).
public final class ClusterMonitor: Sendable {
  public struct Snapshot: Sendable, Equatable {
    public var leader: DqliteNodeInfo?
    public var members: [DqliteNodeInfo] = []
    /// When the last check ran (monotonic nanoseconds), 0 before the first.
    public var checkedAt: UInt64 = 0
  }

  public let config: ClusterConfig
  private let connector: DqliteConnector
  private let state = Mutex(Snapshot())
  /// Used only by `check`, which runs on one thread at a time (the starting thread, then
  /// the monitor's own).
  private let link = Mutex<DqliteConnection?>(nil)
  private let stopped = Atomic<Bool>(false)
  private let intervalMs: Int

  public init(config: ClusterConfig, intervalMs: Int = 500) {
    self.config = config
    self.intervalMs = intervalMs
    connector = DqliteConnector(seeds: config.seeds, timeoutMs: DqliteTimeouts.probeMs)
  }

  public var snapshot: Snapshot { state.withLock { $0 } }

  /// A leader answered at the last check.
  public var hasLeader: Bool { snapshot.leader != nil }

  /// This node led at the last check.
  public var isLeader: Bool { snapshot.leader?.id == config.id }

  /// Checks once now (at start, so that readiness is right from the first probe), then
  /// every interval until `stop`.
  public func start() {
    check()
    let thread = Thread { [self] in
      anonauth_set_thread_name("anonauth-leader")
      while !stopped.load(ordering: .relaxed) {
        Thread.sleep(forTimeInterval: Double(intervalMs) / 1000)
        check()
      }
    }
    thread.name = "anonauth-leader"
    thread.start()
  }

  public func stop() {
    stopped.store(true, ordering: .relaxed)
    link.withLock { link in
      link?.close()
      link = nil
    }
  }

  /// One check, on the connection to the leader kept from the last one: a new
  /// connection (and a leader search) only when that one broke or its node stopped leading.
  private func check() {
    var next = Snapshot(checkedAt: DispatchTime.now().uptimeNanoseconds)
    link.withLock { link in
      for _ in 0..<2 {
        if link == nil { link = try? connector.connectToLeader() }
        guard let connection = link else { break }
        if let leader = try? connection.leader(), leader.address == connection.address,
          let members = try? connection.cluster()
        {
          next.members = members.sorted { $0.id < $1.id }
          next.leader =
            members.first { $0.id == leader.id }
            ?? DqliteNodeInfo(id: leader.id, address: leader.address, role: .voter)
          break
        }
        // Broken, or no longer the leader: look for the leader once more now.
        connection.close()
        link = nil
      }
    }
    state.withLock { $0 = next }
  }
}
