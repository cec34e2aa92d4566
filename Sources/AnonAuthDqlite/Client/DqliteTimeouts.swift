/// How long the daemon's dqlite connections wait before a node counts as down, declared
/// once for the client, the node, the replicated store and the daemon's cluster code.
/// They are not operator settings: each is sized to the job that waits, not to a network.
public enum DqliteTimeouts {
  /// A connection to one known node (connect, send, receive): the node's own Raft
  /// connections and a leader handing over its role.
  public static let nodeMs = 5_000
  /// Each node tried while looking for the leader: the replicated store's connections.
  public static let leaderSearchMs = 2_000
  /// A quick look at the cluster: the monitor's polls and the check for a second
  /// bootstrap; a node slower than this is reported as not answering.
  public static let probeMs = 1_000
  /// An admin operation on the leader (membership listing, removal, hand-over).
  public static let adminMs = 10_000
  /// Joining and promotion: promoting a voter waits for it to catch up with the leader's
  /// log.
  public static let membershipMs = 30_000
  /// The embedded node's start (it reads its Raft log and snapshot from disk, then
  /// listens): past this the daemon gives up and exits rather than wait for ever.
  public static let nodeStartSeconds: Double = 60
}
