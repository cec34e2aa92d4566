import AnonAuthNet
import AnonAuthService
import AnonAuthWire
import Synchronization

/// The RPC server: TLS listener, event loops and connections, feeding the router.
///
/// A state machine behind a lock: it starts once and shuts down once, in order (stop
/// accepting, `GoAway` to everyone, finish calls in flight within the grace period,
/// close what is left, stop the loops).
public final class RPCServer: Sendable {
  private enum Phase {
    case idle
    case running(
      listeners: [LoopBound<Listener>], loops: [EventLoop], registries: [LoopBound<ConnectionRegistry>])
    case stopped
  }

  /// Internal for the in-process daemon (`InProcessDaemon`), whose calls reach it with no socket.
  let core: ServerCore
  private let tls: TLSContextSlot
  private let phase = Mutex<Phase>(.idle)

  private let emulatorBound = Mutex<SocketAddress?>(nil)

  /// - Parameter httpApplication: what serves HTTP/1.1 requests (ALPN `http/1.1`, and the
  ///   emulator listener); nil answers every one 404.
  public convenience init(
    config: RPCServerConfig, tls: TLSContext, router: Router, logger: Logger, metrics: ServerMetrics,
    httpApplication: (any HTTPApplication)? = nil
  ) {
    self.init(
      config: config, tls: tls, router: router, logger: logger, metrics: metrics,
      httpApplication: httpApplication, grpcMethods: GRPCLocalMethods())
  }

  /// - Parameter grpcMethods: the gRPC methods served besides the router's (the standard
  ///   services); gRPC streams for any other path go to the router.
  init(
    config: RPCServerConfig, tls: TLSContext, router: Router, logger: Logger, metrics: ServerMetrics,
    httpApplication: (any HTTPApplication)?, grpcMethods: GRPCLocalMethods
  ) {
    self.core = ServerCore(
      config: config, router: router, logger: logger, metrics: metrics, httpApplication: httpApplication,
      grpcMethods: grpcMethods, makeGRPCHandler: { GRPCStreamHandler() })
    self.tls = TLSContextSlot(tls)
  }

  /// The address the emulator listener bound (`RPCServerConfig.emulatorListen`), once
  /// `start` has returned; nil when it is off.
  public var emulatorAddress: SocketAddress? { emulatorBound.withLock { $0 } }

  public var openConnections: Int { core.openConnections }

  /// The TLS context new connections get.
  public var tlsContext: TLSContext { tls.current }

  /// Gives every connection accepted from now on `context` (a reloaded certificate);
  /// open connections keep the one they started with until they close.
  public func replaceTLSContext(_ context: TLSContext) {
    tls.replace(with: context)
  }

  /// Binds and starts serving; returns the address actually bound (port 0 picks one).
  /// - Throws: `RPCServer.EmulatorListenError` when the emulator listener cannot bind
  ///   (the RPC port's own errors are thrown as they come).
  public func start() throws -> SocketAddress {
    let descriptors = Socket.raiseDescriptorLimit()
    let config = core.config
    // Leave descriptors for the ops port, the store, outbound HTTPS and the loops.
    let reserve = min(256, descriptors / 4)
    let maxConnections = max(1, min(config.maxConnections, descriptors - reserve))
    let limiter = ConnectionLimiter(
      maxConnections: maxConnections, maxPerIP: config.maxConnectionsPerIP,
      ratePerIP: config.maxConnectionRatePerIP, exempt: config.perIPExempt)
    core.logger.info(
      "connection limits",
      [
        "nofile": .int(Int64(descriptors)), "max_connections": .int(Int64(maxConnections)),
        "max_connections_per_ip": .int(Int64(config.maxConnectionsPerIP)),
        "max_connection_rate_per_ip": .int(Int64(config.maxConnectionRatePerIP)),
      ])
    let (fd, bound) = try Socket.listen(on: config.listen)
    var emulator: (fd: Int32, bound: SocketAddress)?
    if let address = config.emulatorListen {
      do {
        emulator = try Socket.listen(on: address)
      } catch {
        Socket.close(fd)
        throw EmulatorListenError(error: error)
      }
    }
    var loops: [EventLoop] = []
    for i in 0..<max(1, core.config.ioThreads) {
      let loop = try EventLoop(name: "anonauth-io-\(i)")
      loop.start()
      loops.append(loop)
    }
    core.metrics.watch(loops: loops.map(\.turns))
    let registries = loops.map { LoopBound(ConnectionRegistry(loop: $0, limiter: limiter), loop: $0) }
    let listener = Listener(
      fd: fd, loop: loops[0], registries: registries, tls: tls, core: core, limiter: limiter)
    let sweep = core.config.sweepIntervalNanos
    for registry in registries { registry.execute { $0.startSweeping(intervalNanos: sweep) } }
    var listeners = [LoopBound(listener, loop: loops[0])]
    if let emulator {
      let plain = Listener(
        fd: emulator.fd, loop: loops[0], registries: registries, tls: nil, core: core, limiter: limiter)
      listeners.append(LoopBound(plain, loop: loops[0]))
      emulatorBound.withLock { $0 = emulator.bound }
    }
    let logger = core.logger
    for boundListener in listeners {
      boundListener.execute { listener in
        do {
          try listener.start()
        } catch {
          logger.error("listener registration failed", ["error": .string("\(error)")])
        }
      }
    }
    phase.withLock { $0 = .running(listeners: listeners, loops: loops, registries: registries) }
    return bound
  }

  /// Graceful shutdown (docs/protocol.md §2). Returns once every connection is closed
  /// and the loops have stopped.
  public func shutdown() async {
    let running = phase.withLock {
      phase -> ([LoopBound<Listener>], [EventLoop], [LoopBound<ConnectionRegistry>])? in
      guard case .running(let listeners, let loops, let registries) = phase else { return nil }
      phase = .stopped
      return (listeners, loops, registries)
    }
    guard let (listeners, loops, registries) = running else { return }
    for listener in listeners { listener.execute { $0.close() } }
    for registry in registries { registry.execute { $0.drainAll() } }

    let grace = core.config.shutdownGraceMs
    let core = self.core
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await core.waitForAllClosed() }
      group.addTask {
        try? await Task.sleep(for: .milliseconds(grace))
        core.abandonWaiting()
      }
      await group.next()
      group.cancelAll()
    }
    if core.openConnections > 0 {
      core.logger.warning(
        "grace period over; closing connections", ["open": .int(Int64(core.openConnections))])
    }
    for registry in registries {
      registry.execute {
        $0.stopSweeping()
        $0.closeAll()
      }
    }
    for loop in loops { loop.stopAndWait() }
  }
}

extension RPCServer {
  /// The emulator listener's address could not be bound; the daemon names its flag.
  public struct EmulatorListenError: Error, CustomStringConvertible {
    public let error: SystemError
    public var description: String { "\(error)" }
  }
}
