/// How the daemon protects the cluster port (`--cluster-listen`): the choice made from
/// `--cluster-ca-file`, `--cluster-cert-file`, `--cluster-key-file`, `--cluster-insecure`
/// and `--dev`.
///
/// With TLS the dqlite node itself listens only on an abstract unix socket that nothing
/// outside the process can reach; the daemon accepts TLS 1.3 on the cluster port, requires
/// a client certificate that chains to the cluster CA, and only then forwards bytes to the
/// node. Its own connections to other nodes present its certificate and check theirs.
public enum ClusterTLSSettings: Sendable, Equatable {
  /// Production: PEM files given by the operator, read again on SIGHUP.
  case files(ClusterTLSFiles)
  /// `--dev` without files: a cluster CA derived from the master key (the same on every
  /// node that shares the key) and a node certificate made at start, in the data dir.
  case development
  /// `--cluster-insecure`: the plaintext behaviour of before (dqlite on the cluster port,
  /// no authentication); a warning is logged at every start.
  case insecure
}

/// The three PEM files of a node's cluster identity.
public struct ClusterTLSFiles: Sendable, Equatable {
  /// The cluster CA(s): a peer is a member if its certificate chains to one of them. During
  /// a rotation the file holds both the old and the new CA.
  public var caFile: String
  /// This node's certificate (chain), presented as server and as client.
  public var certificateFile: String
  /// Its private key.
  public var keyFile: String

  public init(caFile: String, certificateFile: String, keyFile: String) {
    self.caFile = caFile
    self.certificateFile = certificateFile
    self.keyFile = keyFile
  }
}
