import AnonAuthService

/// On a replicated store, other daemons change what this one holds in memory: projects,
/// API keys and admin keys (`ProjectDirectory`), and the signing keys (`TokenMinter`).
/// This reloads both every interval, so a change made through any node reaches every node
/// within seconds.
struct ClusterSync {
  let directory: ProjectDirectory
  let minter: TokenMinter
  let logger: Logger
  var intervalMs: Int = 2_000

  /// Runs until its task is cancelled (a service of the daemon's group).
  func run(on node: ClusterNode) async {
    while !Task.isCancelled {
      try? await Task.sleep(for: .milliseconds(intervalMs))
      guard node.monitor.hasLeader else { continue }
      do {
        try await directory.reload()
        if try await minter.refresh() {
          logger.info("cluster: signing keys changed on another node; installed")
        }
      } catch {
        logger.warning("cluster: reloading shared state failed", ["error": .string("\(error)")])
      }
    }
  }
}
