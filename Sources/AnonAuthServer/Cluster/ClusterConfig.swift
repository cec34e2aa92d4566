/// The daemon's place in a replicated deployment, from `--cluster-id`, `--cluster-listen`,
/// `--cluster-advertise`, `--cluster-join` and the cluster TLS flags. Absent, the store is
/// the single file.
public struct ClusterConfig: Sendable, Equatable {
  /// This node's id, for ever; the node with id 1 bootstraps a new cluster.
  public var id: UInt64
  /// Where this node's dqlite listens ("0.0.0.0:9001" in a container).
  public var listen: String
  /// The address other nodes reach it on: `listen` unless given (a pod's DNS name).
  public var advertise: String
  /// Nodes already in the cluster (or about to be), asked for the leader when joining and
  /// whenever the store looks for the leader.
  public var join: [String]
  /// How the cluster port is protected. The daemon always sets it from its flags (mutual
  /// TLS unless `--cluster-insecure`); the default is for in-process tests only.
  public var tls: ClusterTLSSettings
  /// Raft's election timeout: how long a follower hears nothing from the leader before it
  /// stands for election (each waits a random time between this and twice this). It bounds
  /// a failover: a voter still counting down refuses a candidate, and a candidate refused
  /// waits a whole timeout again, so a leader's loss costs up to about four of these.
  public var electionTimeoutMs: Int = ClusterConfig.defaultElectionTimeoutMs

  public init(
    id: UInt64, listen: String, advertise: String? = nil, join: [String] = [],
    tls: ClusterTLSSettings = .insecure
  ) {
    self.id = id
    self.tls = tls
    self.listen = listen
    self.advertise = advertise ?? listen
    self.join = join.filter { $0 != (advertise ?? listen) }
  }

  /// Every node this one knows of, itself first: the store asks its own node first, which
  /// answers at once whether it leads or knows who does.
  public var seeds: [String] { [advertise] + join }

  /// Voters until there are this many; stand-bys after that (they replicate, and are
  /// promoted when a voter is removed).
  public static let voters = 3

  /// libdqlite's own is 3,000 ms, which let a failover take 12 s; etcd's is 1,000 ms.
  public static let defaultElectionTimeoutMs = 1_500

  /// What libdqlite takes instead of the timeout: the one-way network latency it derives
  /// the election timeout (15 times) and the heartbeat (1.5 times) from.
  public var networkLatencyMs: UInt32 { UInt32(clamping: max(1, electionTimeoutMs / 15)) }
}
