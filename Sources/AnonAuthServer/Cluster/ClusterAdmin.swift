import AnonAuthDqlite
import AnonAuthService
import AnonAuthWire
import Dispatch

/// `AdminService/DescribeCluster` and `RemoveClusterNode`: what `anonauth admin cluster`
/// shows and does. They talk to the dqlite leader with the blocking client, on a queue
/// of their own rather than the cooperative pool.
struct ClusterAdmin: ClusterAdministration {
  /// The answer on a daemon whose store is the single file.
  static let notClustered = RPCError(
    .notClustered, "this daemon's store is the single file: start it with --cluster-id to replicate it")

  /// This daemon's node of the replicated store; nil for the single file.
  let node: ClusterNode?

  func describeCluster(_ request: DescribeClusterRequest, context: CallContext)
    async throws(RPCError) -> DescribeClusterResponse
  {
    guard let node else { throw Self.notClustered }
    return try await Self.blocking { () throws(RPCError) in try Self.describe(node) }
  }

  func removeClusterNode(_ request: RemoveClusterNodeRequest, context: CallContext)
    async throws(RPCError) -> DescribeClusterResponse
  {
    guard let node else { throw Self.notClustered }
    let id = request.id
    return try await Self.blocking { () throws(RPCError) in try Self.remove(id, node: node) }
  }

  private static func describe(_ node: ClusterNode) throws(RPCError) -> DescribeClusterResponse {
    try withLeader(node) { leader throws(DqliteError) in try response(leader, node: node) }
  }

  /// REMOVE sent to the leader; then, if the voters fell below three, a stand-by is
  /// promoted so that the cluster keeps surviving the loss of one node.
  private static func remove(_ id: UInt64, node: ClusterNode) throws(RPCError) -> DescribeClusterResponse {
    try withLeader(node) { leader throws(DqliteError) in
      let members = try leader.cluster()
      guard let removed = members.first(where: { $0.id == id }) else {
        throw DqliteError.invalidRequest("node \(id) is not a member")
      }
      try leader.remove(id: id)
      let voters = members.filter { $0.role == .voter && $0.id != id }
      if removed.role == .voter, voters.count < ClusterConfig.voters,
        let standBy = members.first(where: { $0.role == .standBy && $0.id != id })
      {
        try leader.assign(id: standBy.id, role: .voter)
      }
      return try response(leader, node: node)
    }
  }

  private static func response(_ leader: DqliteConnection, node: ClusterNode) throws(DqliteError)
    -> DescribeClusterResponse
  {
    let leaderID = try leader.leader()?.id ?? 0
    var response = DescribeClusterResponse()
    response.engine = "dqlite"
    response.nodeId = node.config.id
    response.leaderId = leaderID
    response.nodes = try leader.cluster().sorted { $0.id < $1.id }.map { member in
      var entry = AnonAuthWire.ClusterNode()
      entry.id = member.id
      entry.address = member.address
      entry.role = "\(member.role)"
      entry.leader = member.id == leaderID
      return entry
    }
    return response
  }

  private static func withLeader<T>(
    _ node: ClusterNode, _ body: (DqliteConnection) throws(DqliteError) -> T
  ) throws(RPCError) -> T {
    do {
      let leader = try DqliteConnector(seeds: node.config.seeds, timeoutMs: DqliteTimeouts.adminMs)
        .connectToLeader()
      defer { leader.close() }
      return try body(leader)
    } catch .invalidRequest(let message) {
      throw RPCError(.nodeNotFound, message)
    } catch .failure(let code, let message) {
      throw RPCError(.clusterRefused, "dqlite \(code): \(message)")
    } catch {
      throw RPCError(.storeUnavailable, "the replicated store has no leader in reach: \(error)")
    }
  }

  private static func blocking<T: Sendable>(
    _ body: @escaping @Sendable () throws(RPCError) -> T
  ) async throws(RPCError) -> T {
    let result = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<T, RPCError>, Never>) in
      DispatchQueue.global().async {
        continuation.resume(returning: Result { () throws(RPCError) -> T in try body() })
      }
    }
    return try result.get()
  }
}
