import AnonAuthCrypto
import AnonAuthDqlite
import AnonAuthService
import Foundation
import Glibc

/// Loads the cluster identity the settings name (`ClusterTLSSettings`) and reloads it on
/// SIGHUP, the way `TLSReloader` does the RPC port's: a reload that fails keeps the
/// identity in use and logs why.
enum ClusterTLS {
  /// Where `--dev` writes its cluster CA certificate and this node's certificate and key
  /// (the CA's key is never written: it is derived from the master key when needed).
  static func developmentDirectory(dataDir: String) -> String { dataDir + "/dev-cluster-tls" }

  /// The identity for `settings` (not `.insecure`).
  static func load(
    _ settings: ClusterTLSSettings, id: UInt64, dataDir: String, masterKey: [UInt8]
  ) throws(ConfigError) -> ClusterTLSContext {
    switch settings {
    case .insecure:
      throw ConfigError("cluster: no TLS identity in --cluster-insecure mode")
    case .files(let files):
      return try context(files)
    case .development:
      return try context(try makeDevelopmentFiles(id: id, dataDir: dataDir, masterKey: masterKey))
    }
  }

  static func context(_ files: ClusterTLSFiles) throws(ConfigError) -> ClusterTLSContext {
    if let problem = SecretFile.problem(files.keyFile, processIsRoot: geteuid() == 0) {
      throw ConfigError("--cluster-key-file \(files.keyFile): \(problem)")
    }
    do {
      return try ClusterTLSContext(
        caFile: files.caFile, certificateFile: files.certificateFile, keyFile: files.keyFile)
    } catch {
      throw ConfigError("cluster TLS: \(error)")
    }
  }

  /// SIGHUP: the files read again; connections made from now on use them.
  static func reload(_ files: ClusterTLSFiles, into slot: ClusterTLSSlot, logger: Logger) {
    do {
      let context = try context(files)
      slot.replace(context)
      logger.info(
        "cluster tls reloaded",
        [
          "cluster_cert": .string(files.certificateFile),
          "cluster_sha256": .string(context.certificateSHA256),
        ])
    } catch {
      logger.error(
        "cluster tls reload failed; keeping the current certificate",
        ["error": .string(error.description), "cluster_sha256": .string(slot.context.certificateSHA256)])
    }
  }

  /// `--dev`: the cluster CA derived from the master key (the same on every node that
  /// shares it) and a new node certificate it signs, written to the data dir.
  private static func makeDevelopmentFiles(
    id: UInt64, dataDir: String, masterKey: [UInt8]
  ) throws(ConfigError) -> ClusterTLSFiles {
    let directory = developmentDirectory(dataDir: dataDir)
    let files = ClusterTLSFiles(
      caFile: directory + "/ca.crt", certificateFile: directory + "/node.crt",
      keyFile: directory + "/node.key")
    do {
      let authority = try ClusterCertificates.developmentAuthority(masterKey: masterKey)
      let now = Date()
      let node = try ClusterCertificates.node(
        commonName: "anonauth-dev-node-\(id)", authority: authority,
        notBefore: now.addingTimeInterval(-86_400), notAfter: now.addingTimeInterval(10 * 366 * 86_400))
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      try write(authority.certificatePEM, to: files.caFile, mode: 0o644)
      try write(node.certificatePEM, to: files.certificateFile, mode: 0o644)
      try write(node.privateKeyPEM, to: files.keyFile, mode: 0o600)
    } catch {
      throw ConfigError("--dev cluster certificates in \(directory): \(error)")
    }
    return files
  }

  private static func write(_ text: String, to path: String, mode: Int) throws {
    let temporary = path + ".tmp"
    guard
      FileManager.default.createFile(
        atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
    else { throw ConfigError("cannot write \(temporary)") }
    guard rename(temporary, path) == 0 else {
      throw ConfigError("cannot rename \(temporary) to \(path) (errno \(errno))")
    }
  }
}
