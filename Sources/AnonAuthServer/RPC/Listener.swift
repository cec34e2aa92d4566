import AnonAuthNet
import AnonAuthService

/// Accepts connections on the first loop and hands each to a loop in turn.
final class Listener {
  private let registries: [LoopBound<ConnectionRegistry>]
  private let tls: TLSContextSlot
  private let core: ServerCore
  private var next = 0
  private var acceptLoop: AcceptLoop?

  init(
    fd: Int32, loop: EventLoop, registries: [LoopBound<ConnectionRegistry>], tls: TLSContextSlot,
    core: ServerCore
  ) {
    self.registries = registries
    self.tls = tls
    self.core = core
    let logger = core.logger
    acceptLoop = AcceptLoop(
      fd: fd, loop: loop, onAccept: { [unowned self] fd, peer in dispatch(fd, peer) },
      onError: { logger.error("rpc listener paused", ["error": .string($0)]) })
  }

  func start() throws(SystemError) {
    try acceptLoop?.start()
  }

  private func dispatch(_ fd: Int32, _ peer: SocketAddress?) {
    core.connectionOpened()
    let target = registries[next % registries.count]
    next &+= 1
    let context = tls.current
    let core = self.core
    let maxFrame = core.config.maxFrameSize
    target.execute { registry in
      do {
        let tls = try TLSConnection(
          fd: fd, context: context, loop: registry.loop, peer: peer, maxFrameSize: maxFrame)
        let connection = ServerConnection(connection: tls, core: core, registry: registry)
        tls.delegate = connection
        registry.add(connection)
        tls.start()
        if registry.isDraining { connection.drain() }
      } catch {
        core.logger.error("TLS setup failed", ["error": .string("\(error)")])
        core.connectionClosed()
      }
    }
  }

  /// Stops accepting: the first step of graceful shutdown.
  func close() {
    acceptLoop?.close()
  }
}
