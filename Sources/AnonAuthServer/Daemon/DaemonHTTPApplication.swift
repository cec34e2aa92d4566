import AnonAuthService
import AnonAuthWire

/// What the daemon serves over HTTP (ALPN `http/1.1` on the RPC port, and the emulator
/// listener): Firebase's JSON API onto the same router as native calls, behind the
/// emulator listener's `Bearer owner` rule (`AdminEmulatorOwner`).
enum DaemonHTTPApplication {
  /// The process admin key that `Bearer owner` stands for is made only when the emulator
  /// listener is on; without it `Bearer owner` is a wrong key everywhere.
  static func make(
    router: Router, directory: ProjectDirectory, logger: Logger, metrics: ServerMetrics, emulatorOn: Bool
  ) throws(RPCError) -> any HTTPApplication {
    let callLog = FirebaseCallLog(logger: logger, metrics: metrics, router: router)
    let api = FirebaseAPI(router: router, recordCall: { callLog.record($0) })
    return AdminEmulatorOwner(
      api: api, processAdminKey: emulatorOn ? try directory.makeProcessAdminKey() : nil,
      isAdminKey: { directory.isAdminKey($0) })
  }
}
