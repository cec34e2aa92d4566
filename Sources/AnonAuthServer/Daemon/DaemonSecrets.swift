import AnonAuthNet

/// The secrets the daemon starts with: the TLS certificate and key, the master key and
/// the operator's admin key, read and checked before anything else starts.
///
/// Outside `--dev` every one of them comes from a file the deployment gives (missing
/// files are a bad configuration, never a silent default), and they are read before the
/// data dir is touched. In `--dev` the certificate and the master key are made in the data
/// dir when not given.
struct DaemonSecrets {
  let certificateFile: String
  let keyFile: String
  let tls: TLSContext
  let masterKey: MasterKey
  /// The raw key of `--admin-key-file`, if given; only its hash reaches the store.
  let adminKey: String?

  /// Each secret file must be the daemon's alone (`SecretFile`): one that group or others
  /// may read or write stops the start.
  /// - Throws: `ConfigError`: one line naming the file and what is wrong with it.
  static func load(_ config: DaemonConfig, dataDir: DataDirectory) throws(ConfigError) -> DaemonSecrets {
    var certificateFile = config.tlsCert
    var keyFile = config.tlsKey
    var masterKeyFile = config.masterKeyFile
    if config.dev {
      if certificateFile == nil {
        try dataDir.ensureDevCertificate()
        certificateFile = dataDir.devCertificate
        keyFile = dataDir.devPrivateKey
      }
      if masterKeyFile == nil {
        try dataDir.ensureDevMasterKey()
        masterKeyFile = dataDir.devMasterKey
      }
    }
    guard let certificateFile, let keyFile, let masterKeyFile else {
      throw ConfigError("--tls-cert, --tls-key and --master-key-file are required without --dev")
    }
    try SecretFile.check(masterKeyFile, setting: "--master-key-file")
    let masterKey = try MasterKey.load(path: masterKeyFile)
    let adminKey = try config.adminKeyFile.map { path throws(ConfigError) in
      try SecretFile.check(path, setting: "--admin-key-file")
      return try AdminKeyFile.load(path: path)
    }
    try SecretFile.check(keyFile, setting: "--tls-key")
    let tls: TLSContext
    do {
      tls = try TLSContext.server(
        certificateChainFile: certificateFile, privateKeyFile: keyFile, clientCAFile: config.clientCAFile)
    } catch {
      throw ConfigError(error.description)
    }
    return DaemonSecrets(
      certificateFile: certificateFile, keyFile: keyFile, tls: tls, masterKey: masterKey, adminKey: adminKey)
  }
}
