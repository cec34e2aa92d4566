import AnonAuthNet
import AnonAuthService
import Glibc

/// SIGHUP reloads the TLS certificate and key from their files: connections accepted
/// afterwards present the new certificate, open ones keep theirs and are not dropped. A
/// reload that fails (a missing file, a key that does not match) logs an error and keeps
/// the current certificate, so a botched renewal never takes the server down.
final class TLSReloader: Sendable {
  private let certificateFile: String
  private let keyFile: String
  private let clientCAFile: String?
  private let server: RPCServer
  private let logger: Logger

  /// `SignalWaiter` calls `reload()` on SIGHUP once the daemon hands it over (see
  /// `Daemon.run`); before that a SIGHUP is read and ignored.
  init(certificateFile: String, keyFile: String, clientCAFile: String?, server: RPCServer, logger: Logger) {
    self.certificateFile = certificateFile
    self.keyFile = keyFile
    self.clientCAFile = clientCAFile
    self.server = server
    self.logger = logger
  }

  func reload() {
    Self.reload(
      certificateFile: certificateFile, keyFile: keyFile, clientCAFile: clientCAFile, server: server,
      logger: logger)
  }

  static func reload(
    certificateFile: String, keyFile: String, clientCAFile: String?, server: RPCServer, logger: Logger
  ) {
    // A renewed key left open to others is refused as one is at start.
    if let problem = SecretFile.problem(keyFile, processIsRoot: geteuid() == 0) {
      logger.error(
        "tls reload failed; keeping the current certificate",
        [
          "error": .string("--tls-key \(keyFile): \(problem)"),
          "tls_sha256": .string(server.tlsContext.certificateSHA256 ?? ""),
        ])
      return
    }
    do {
      let context = try TLSContext.server(
        certificateChainFile: certificateFile, privateKeyFile: keyFile, clientCAFile: clientCAFile)
      server.replaceTLSContext(context)
      logger.info(
        "tls reloaded",
        ["tls_cert": .string(certificateFile), "tls_sha256": .string(context.certificateSHA256 ?? "")])
    } catch {
      logger.error(
        "tls reload failed; keeping the current certificate",
        [
          "error": .string(error.description),
          "tls_sha256": .string(server.tlsContext.certificateSHA256 ?? ""),
        ])
    }
  }
}
