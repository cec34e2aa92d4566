import AnonAuthWire

/// The replicated store's membership as `AdminService` answers it. The server implements
/// it (it holds the dqlite node); the service layer knows accounts, not dqlite.
public protocol ClusterAdministration: Sendable {
  func describeCluster(_ request: DescribeClusterRequest, context: CallContext)
    async throws(RPCError) -> DescribeClusterResponse
  func removeClusterNode(_ request: RemoveClusterNodeRequest, context: CallContext)
    async throws(RPCError) -> DescribeClusterResponse
}

extension AdminService {
  public func describeCluster(_ request: DescribeClusterRequest, context: CallContext)
    async throws(RPCError) -> DescribeClusterResponse
  {
    try await administration().describeCluster(request, context: context)
  }

  public func removeClusterNode(_ request: RemoveClusterNodeRequest, context: CallContext)
    async throws(RPCError) -> DescribeClusterResponse
  {
    try await administration().removeClusterNode(request, context: context)
  }

  /// Only an AdminService made without one (in the service's tests) lacks it.
  private func administration() throws(RPCError) -> any ClusterAdministration {
    guard let cluster else {
      throw RPCError(.unknownMethod, "this AdminService was made without cluster administration")
    }
    return cluster
  }
}
