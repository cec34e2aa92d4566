import AnonAuthDqlite

/// Where the replicated store is: the dqlite nodes to ask for the leader (this process's
/// own node first), and the name of the replicated database.
public struct ClusterStoreOptions: Sendable, Hashable {
  public var seeds: [String]
  public var databaseName: String
  /// How long a connect, send or receive to a node may take before the node counts as down.
  public var timeoutMs: Int

  public init(
    seeds: [String], databaseName: String = "anonauth", timeoutMs: Int = DqliteTimeouts.leaderSearchMs
  ) {
    self.seeds = seeds
    self.databaseName = databaseName
    self.timeoutMs = timeoutMs
  }
}
