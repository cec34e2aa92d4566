import AnonAuthNet
import AnonAuthService
import Dispatch
import Glibc

/// SIGHUP reloads the TLS certificate and key from their files: connections accepted
/// afterwards present the new certificate, open ones keep theirs and are not dropped. A
/// reload that fails (a missing file, a key that does not match) logs an error and keeps
/// the current certificate, so a botched renewal never takes the server down.
final class TLSReloader: @unchecked Sendable {
  // @unchecked Sendable is safe: `source` is set once in init and only cancelled later
  // (Dispatch sources are thread-safe); the handler runs on one serial queue and touches
  // only Sendable values.
  private let source: any DispatchSourceSignal

  /// The signal is ignored at the process level before this is made (see `Daemon.run`)
  /// so that a SIGHUP during start-up does not kill the process.
  init(certificateFile: String, keyFile: String, clientCAFile: String?, server: RPCServer, logger: Logger) {
    Glibc.signal(SIGHUP, SIG_IGN)
    source = DispatchSource.makeSignalSource(
      signal: SIGHUP, queue: DispatchQueue(label: "anonauth.tls-reload"))
    source.setEventHandler {
      Self.reload(
        certificateFile: certificateFile, keyFile: keyFile, clientCAFile: clientCAFile, server: server,
        logger: logger)
    }
    source.resume()
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

  func stop() { source.cancel() }
}
