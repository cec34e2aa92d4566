/// Finds the cluster's leader from a list of known nodes and opens a connection to it:
/// the way every SQL connection of the replicated store is made, first and after the
/// leader changes.
///
/// A node that is not the leader names the one it knows; the connector then asks that
/// one too and keeps it only if it names itself, so a stale answer from a partitioned
/// node cannot send writes to a former leader.
public struct DqliteConnector: Sendable {
  public let seeds: [String]
  public let timeoutMs: Int

  public init(seeds: [String], timeoutMs: Int = DqliteTimeouts.leaderSearchMs) {
    self.seeds = seeds
    self.timeoutMs = timeoutMs
  }

  /// A connection to the current leader, or `noLeader` with what each node said.
  public func connectToLeader() throws(DqliteError) -> DqliteConnection {
    var reasons: [String] = []
    for seed in seeds {
      do {
        let connection = try DqliteConnection(address: seed, timeoutMs: timeoutMs)
        guard let leader = try connection.leader() else {
          reasons.append("\(seed): knows no leader")
          connection.close()
          continue
        }
        if leader.address == seed { return connection }
        connection.close()
        let candidate = try DqliteConnection(address: leader.address, timeoutMs: timeoutMs)
        if try candidate.leader()?.address == leader.address { return candidate }
        candidate.close()
        reasons.append("\(seed): named \(leader.address), which does not lead")
      } catch {
        reasons.append("\(seed): \(error)")
      }
    }
    throw .noLeader(reasons.joined(separator: "; "))
  }

  /// The leader's id and address without keeping a connection: for health checks.
  public func findLeader() throws(DqliteError) -> (id: UInt64, address: String) {
    let connection = try connectToLeader()
    defer { connection.close() }
    guard let leader = try connection.leader() else { throw .noLeader("the leader stepped down") }
    return leader
  }
}
