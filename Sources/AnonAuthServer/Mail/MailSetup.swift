import AnonAuthNet
import AnonAuthService
import AnonAuthStore
import Glibc
import Synchronization

/// The daemon's mail worker: over SMTP with `--smtp-url`, into `DATA_DIR/mail` in --dev
/// without it, none otherwise.
enum MailSetup {
  static func worker(
    config: DaemonConfig, dataDir: String, store: Store, clock: any ServiceClock, logger: Logger,
    metrics: ServiceMetrics, masterKey: [UInt8], sendsNow: @escaping @Sendable () -> Bool
  ) throws(ConfigError) -> MailWorker? {
    let transport: any MailTransport
    if let url = config.mail.smtpURL {
      let client: SMTPClient
      do {
        client = try SMTPClient(
          url: url, credentials: config.mail.credentials, caFile: config.mail.caFile,
          heloName: HostName.current, timeoutMs: config.mail.timeoutMs)
      } catch {
        throw ConfigError("--smtp-ca-file: \(error.description)")
      }
      transport = SMTPMailTransport(client: client)
      logger.info("email actions are mailed", ["smtp": .string(url.description)])
    } else if config.dev {
      transport = DirectoryMailTransport(directory: dataDir + "/mail", logger: logger)
      logger.info("email actions are written to the data dir (--dev without --smtp-url)")
    } else {
      return nil
    }
    return MailWorker(
      store: store, transport: transport, clock: clock, logger: logger, metrics: metrics,
      masterKey: masterKey, retryBaseMs: config.mail.retryBaseMs, sendsNow: sendsNow)
  }
}

/// Where email links lead: `--email-action-url`; else the public URL's
/// `/__/auth/action`; else the emulator listener's `/emulator/action` (set once it is
/// bound); else `http://localhost/__/auth/action`.
final class ActionURLBase: Sendable {
  private let configured: String
  private let emulator = Mutex<String?>(nil)

  init(configured: String) { self.configured = configured }

  func setEmulator(_ url: String?) { emulator.withLock { $0 = url } }

  func url(publicURL: String?) -> String {
    if !configured.isEmpty { return configured }
    if let publicURL { return publicURL + "/__/auth/action" }
    return emulator.withLock { $0 } ?? "http://localhost/__/auth/action"
  }
}

/// This host's name for EHLO.
enum HostName {
  static var current: String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, 255) == 0 else { return "localhost" }
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    let name = String(decoding: bytes, as: UTF8.self)
    return name.isEmpty ? "localhost" : name
  }
}
