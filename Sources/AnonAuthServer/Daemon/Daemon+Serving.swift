import AnonAuthNet
import AnonAuthService
import AnonAuthStore
import Foundation
import Glibc

/// The last step of the start: `client.json` in --dev, readiness on, the `ready` line
/// (the first line on stdout: scripts and tests read it), the dev credentials line, the
/// store's integrity check in the background, and the `serving` log.
struct Announcement: Sendable {
  let config: DaemonConfig
  let dataDir: DataDirectory
  let logger: Logger
  let certificateFile: String
  let tlsSHA256: String
  let stack: ServingStack
  let store: Store

  func announce(rpc: SocketAddress, ops: SocketAddress) throws {
    if config.dev {
      let caFile = URL(fileURLWithPath: certificateFile).standardizedFileURL.path
      try ClientFile.update(
        at: dataDir.clientJSON, rpc: rpc.description, ops: ops.description, caFile: caFile,
        extra: stack.newDevKeys)
    }
    stack.state.set(.serving)
    let emulator = stack.server.emulatorAddress
    let ready: [String: LogValue] = [
      "event": "ready", "rpc": .string(rpc.description), "ops": .string(ops.description),
      "pid": .int(Int64(getpid())), "data_dir": .string(dataDir.path), "dev": .bool(config.dev),
    ].merging(emulator.map { ["firebase_emulator": .string($0.description)] } ?? [:]) { $1 }
      .merging(stack.minter.publicURL.map { ["public_url": .string($0)] } ?? [:]) { $1 }
    FileHandle.standardOutput.write(Data((LogValue.object(ready).json + "\n").utf8))
    if !stack.newDevKeys.isEmpty {
      // Where the new keys are, never the keys: stdout is often kept as logs (container
      // runtimes), and the raw admin key must exist nowhere but client.json (0600).
      let credentials: [String: LogValue] = [
        "event": "dev_credentials", "client_json": .string(dataDir.clientJSON),
        "written": .string(stack.newDevKeys.keys.sorted().joined(separator: ",")),
      ]
      FileHandle.standardOutput.write(Data((LogValue.object(credentials).json + "\n").utf8))
    }
    Task.detached { [store, logger] in
      let started = ContinuousClock.now
      do {
        try await store.verifyIntegrity()
        let elapsed = ContinuousClock.now - started
        logger.info("store integrity check passed", ["seconds": .string("\(elapsed.components.seconds)")])
      } catch {
        logger.error(
          "store integrity check failed: writes are refused and /readyz is 503; restore a backup",
          ["error": .string("\(error)")])
      }
    }
    logger.info(
      "serving",
      [
        "rpc": .string(rpc.description), "ops": .string(ops.description),
        "tls_sha256": .string(tlsSHA256),
      ].merging(emulator.map { ["firebase_emulator": .string($0.description)] } ?? [:]) { $1 })
  }
}

extension Daemon {
  /// Opens the store (on the cluster's node when there is one); a failure says where,
  /// and how much room its file system has left when that is the likely cause.
  static func openStore(_ options: StoreOptions) throws(ConfigError) -> Store {
    do {
      return try Store.open(options: options, migrations: AnonAuthSchema.migrations)
    } catch {
      var message = "store \(options.cluster == nil ? options.path : "on the cluster"): \(error)"
      if options.cluster == nil, let free = Store.freeBytes(forStoreAt: options.path),
        free < Store.probeHeadroomBytes
      {
        message += " (the data dir's file system has \(free) bytes free; the store needs room for its WAL)"
      }
      throw ConfigError(message)
    }
  }
}
