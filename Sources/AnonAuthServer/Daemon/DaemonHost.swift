import AnonAuthNet
import AnonAuthService
import Foundation
import Glibc

/// What the process sets up before any service starts, in this order: core dumps off,
/// SIGPIPE ignored, the signal handlers (from here a SIGHUP cannot kill a starting
/// daemon), umask 077, the logger, then the secrets and the data dir.
struct DaemonHost {
  let signals: SignalWaiter
  let logger: Logger
  let dataDir: DataDirectory
  let secrets: DaemonSecrets

  static func prepare(_ config: DaemonConfig) throws -> DaemonHost {
    let coreDumpsOff = CoreDumps.disable()
    let heapTuned = HeapTuning.apply()
    signal(SIGPIPE, SIG_IGN)
    // From here a SIGHUP cannot kill a starting daemon: it is read, and ignored until the
    // reloader takes it.
    let signals = try SignalWaiter()
    // Every file the daemon makes (store, WAL, keys, client.json, backups) is its own
    // alone, whatever umask it was started with.
    umask(0o077)
    let logger = Logger(minimum: config.logLevel)
    if !coreDumpsOff {
      logger.warning("the kernel refused to turn core dumps off: a core file would hold the master key")
    }
    if !heapTuned {
      logger.warning("glibc refused the heap thresholds: large frames will fault fresh pages")
    }
    let dataDir = DataDirectory(path: config.dataDir)
    // Outside --dev the secrets are read before the data dir is touched: a bad file
    // changes nothing.
    let secrets: DaemonSecrets
    let permissions: DataDirectory.PermissionChanges
    if config.dev {
      permissions = try dataDir.prepare()
      secrets = try DaemonSecrets.load(config, dataDir: dataDir)
    } else {
      secrets = try DaemonSecrets.load(config, dataDir: dataDir)
      permissions = try dataDir.prepare()
    }
    for change in permissions.tightened {
      logger.warning(
        "data dir permissions tightened: it was open to group or others", ["change": .string(change)])
    }
    for item in permissions.leftOpen {
      logger.warning(
        "data dir folder open to group or others, owned by another user", ["item": .string(item)])
    }
    return DaemonHost(signals: signals, logger: logger, dataDir: dataDir, secrets: secrets)
  }
}
