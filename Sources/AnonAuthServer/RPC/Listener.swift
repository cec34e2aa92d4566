import AnonAuthNet
import AnonAuthService

/// Accepts connections on the first loop and hands each to a loop in turn: TLS
/// connections on the RPC port (native frames or HTTP/1.1, by ALPN), or, without a TLS
/// context, plain HTTP/1.1 connections on the emulator listener.
final class Listener {
  private let registries: [LoopBound<ConnectionRegistry>]
  /// nil: the emulator listener, plain HTTP.
  private let tls: TLSContextSlot?
  private let core: ServerCore
  private let limiter: ConnectionLimiter
  private var next = 0
  /// Refusals since the last log line about them, and when that was: refusals are
  /// logged at most once per `refusalLogIntervalNanos`, with their count.
  private var refusedSinceLog = 0
  private var lastRefusalLog: UInt64?
  private static let refusalLogIntervalNanos: UInt64 = 10_000_000_000
  private var acceptLoop: AcceptLoop?

  init(
    fd: Int32, loop: EventLoop, registries: [LoopBound<ConnectionRegistry>], tls: TLSContextSlot?,
    core: ServerCore, limiter: ConnectionLimiter
  ) {
    self.registries = registries
    self.tls = tls
    self.core = core
    self.limiter = limiter
    let logger = core.logger
    acceptLoop = AcceptLoop(
      fd: fd, loop: loop, onAccept: { [unowned self] fd, peer in dispatch(fd, peer) },
      onError: { [kind = tls == nil ? "emulator" : "rpc"] in
        logger.error("\(kind) listener paused", ["error": .string($0)])
      })
  }

  func start() throws(SystemError) {
    try acceptLoop?.start()
  }

  private func dispatch(_ fd: Int32, _ peer: SocketAddress?) {
    if let refusal = limiter.admit(peer?.host) {
      // Accepted and closed at once: the backlog keeps moving and the descriptor is free.
      Socket.close(fd)
      refuse(refusal, peer: peer)
      return
    }
    core.connectionOpened()
    // An address still paying off a penalty is served after everyone else, from its
    // handshake on.
    let deprioritized = limiter.isPenalized(peer?.host)
    let target = registries[next % registries.count]
    next &+= 1
    let core = self.core
    guard let context = tls?.current else {
      target.execute { registry in
        let plain = PlainConnection(fd: fd, loop: registry.loop, peer: peer)
        plain.deprioritized = deprioritized
        core.chargeQueuedOutput(of: plain)
        let connection = HTTPServerConnection(
          stream: plain, listener: .emulator, core: core, registry: registry)
        plain.delegate = connection
        registry.add(connection)
        plain.start()
        if registry.isDraining { connection.drain() }
      }
      return
    }
    let limiter = self.limiter
    target.execute { registry in
      do {
        let tls = try TLSConnection(fd: fd, context: context, loop: registry.loop, peer: peer)
        tls.deprioritized = deprioritized
        core.chargeQueuedOutput(of: tls)
        // Native frames until the handshake's ALPN choice says otherwise (`TransportSwitch`).
        let connection = ServerConnection(connection: tls, core: core, registry: registry)
        tls.delegate = connection
        tls.handshakeDelegate = connection
        registry.add(connection)
        tls.start()
        if registry.isDraining { connection.drain() }
      } catch {
        core.logger.error("TLS setup failed", ["error": .string("\(error)")])
        limiter.release(peer?.host)
        core.connectionClosed()
      }
    }
  }

  private func refuse(_ refusal: ConnectionLimiter.Refusal, peer: SocketAddress?) {
    core.metrics.connectionsRejected.add(1, ordering: .relaxed)
    refusedSinceLog += 1
    let now = MonotonicClock.now()
    if let last = lastRefusalLog, now - last < Self.refusalLogIntervalNanos { return }
    lastRefusalLog = now
    let limit: String
    switch refusal {
    case .total: limit = "max-connections \(limiter.maxConnections)"
    case .perIP: limit = "max-connections-per-ip \(limiter.maxPerIP)"
    case .rate: limit = "max-connection-rate-per-ip \(limiter.ratePerIP)"
    }
    core.logger.warning(
      "connections refused: over a limit",
      [
        "limit": .string(limit), "refused": .int(Int64(refusedSinceLog)),
        "peer": .string(peer?.host ?? ""),
      ])
    refusedSinceLog = 0
  }

  /// Stops accepting: the first step of graceful shutdown.
  func close() {
    acceptLoop?.close()
  }
}
