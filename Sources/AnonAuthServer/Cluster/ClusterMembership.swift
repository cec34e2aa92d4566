import AnonAuthDqlite
import AnonAuthService
import Foundation

/// Brings this node into the cluster at start: node 1 on an empty directory bootstraps;
/// any other node asks the leader to ADD it, then ASSIGNs it a role (a voter while there
/// are fewer than three, a stand-by after). A node already a member (a restart) just
/// comes back. Blocking: it runs once, on the starting thread, before the store opens.
enum ClusterMembership {
  /// - Parameter restarted: the node's directory held Raft state before it started.
  /// - Throws: `ConfigError` when the cluster refuses this node (its id is taken by
  ///   another address, or it is a member whose data is gone); `NoLeaderError` when no
  ///   leader answered within `deadlineSeconds`.
  static func join(
    _ config: ClusterConfig, restarted: Bool, logger: Logger, deadlineSeconds: Double = 120
  ) throws {
    let connector = DqliteConnector(seeds: config.seeds, timeoutMs: DqliteTimeouts.membershipMs)
    let deadline = Date().addingTimeInterval(deadlineSeconds)
    var lastLog = Date.distantPast
    while true {
      do {
        let leader = try connector.connectToLeader()
        defer { leader.close() }
        let members = try leader.cluster()
        let voters = members.filter { $0.role == .voter && $0.id != config.id }.count
        let role: DqliteRole = voters < ClusterConfig.voters ? .voter : .standBy
        if let me = members.first(where: { $0.id == config.id }) {
          guard me.address == config.advertise else {
            throw ConfigError(
              "--cluster-id \(config.id) is already in the cluster at \(me.address), not \(config.advertise): "
                + "give this node a new id, or remove the old one first (see docs/replicated-store.md, Runbook)"
            )
          }
          // A member that lost its Raft log would vote again having forgotten what it
          // acknowledged: the cluster could lose writes. Node 1 bootstraps alone, so only
          // another id can get here on an empty directory.
          guard restarted || config.id == 1 else {
            throw ConfigError(
              "cluster: node \(config.id) is a member but its data directory is empty (a lost disk?): "
                + "remove it (anonauth admin cluster --remove \(config.id)) and start this node with a new "
                + "--cluster-id; never reuse the id")
          }
          if me.role == .spare {
            try leader.assign(id: config.id, role: role)
            logger.info("cluster: role assigned", ["id": .int(Int64(config.id)), "role": .string("\(role)")])
          }
          return
        }
        try leader.add(id: config.id, address: config.advertise)
        try leader.assign(id: config.id, role: role)
        logger.info(
          "cluster: joined",
          ["id": .int(Int64(config.id)), "role": .string("\(role)"), "via": .string(leader.address)])
        return
      } catch let error as ConfigError {
        throw error
      } catch {
        if Date() > deadline {
          throw NoLeaderError(message: "cluster: could not join within \(Int(deadlineSeconds)) s: \(error)")
        }
        if Date().timeIntervalSince(lastLog) > 5 {
          logger.warning("cluster: cannot join yet; retrying", ["error": .string("\(error)")])
          lastLog = Date()
        }
        Thread.sleep(forTimeInterval: 0.2)
      }
    }
  }

  /// Joining timed out: not a bad setting (exit 2, never restarted) but a cluster not yet
  /// there (exit 1, restarted by the supervisor).
  struct NoLeaderError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
  }

  /// Node 1 on an empty directory would bootstrap a cluster of its own: if the nodes in
  /// `--cluster-join` belong to a cluster, that is a second, diverging cluster, so the
  /// start is refused instead.
  ///
  /// A node that names any leader belongs to a cluster, even when that leader is gone (a
  /// follower names its last leader until its own election timer runs out); a node never
  /// joined names none. Between leaders (an election, say right after the old node 1
  /// stopped) every member names none for a moment, so while a join node answers, the
  /// question is asked again for up to four election timeouts, the longest an election
  /// takes, before this node concludes that no cluster exists.
  static func refuseSecondBootstrap(_ config: ClusterConfig, directory: String) throws(ConfigError) {
    guard config.id == 1, !config.join.isEmpty, !hasRaftState(directory) else { return }
    let deadline = Date().addingTimeInterval(4 * Double(config.electionTimeoutMs) / 1000)
    while true {
      var answered = false
      for seed in config.join {
        guard let connection = try? DqliteConnection(address: seed, timeoutMs: DqliteTimeouts.probeMs) else {
          continue
        }
        let named = try? connection.leader()
        connection.close()
        answered = true
        if let leader = named ?? nil {
          throw ConfigError(
            "cluster: node 1's data directory is empty but the cluster it would join exists "
              + "(\(seed) names leader \(leader.address)): start this node with a new --cluster-id so that "
              + "it joins instead")
        }
      }
      guard answered, Date() < deadline else { return }
      Thread.sleep(forTimeInterval: 0.2)
    }
  }

  /// Whether the node's directory holds Raft metadata from an earlier run.
  static func hasRaftState(_ directory: String) -> Bool {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.contains { $0.hasPrefix("metadata") }
  }
}
