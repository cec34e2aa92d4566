import AnonAuthNet
import AnonAuthService
import Glibc

/// Accepts connections on the first loop and hands each to a loop in turn.
final class Listener: EventHandler {
  private let fd: Int32
  private let loop: EventLoop
  private let registries: [LoopBound<ConnectionRegistry>]
  private let tls: TLSContextSlot
  private let core: ServerCore
  private var registration: UInt64 = 0
  private var next = 0
  private var closed = false

  init(
    fd: Int32, loop: EventLoop, registries: [LoopBound<ConnectionRegistry>], tls: TLSContextSlot,
    core: ServerCore
  ) {
    self.fd = fd
    self.loop = loop
    self.registries = registries
    self.tls = tls
    self.core = core
  }

  func start() throws(SystemError) {
    registration = try loop.register(fd: fd, events: .readable, handler: self)
  }

  func handleEvents(_ events: IOEvents) {
    while !closed {
      let accepted: (fd: Int32, peer: SocketAddress?)?
      do {
        accepted = try Socket.accept(fd)
      } catch {
        // Out of descriptors (EMFILE/ENFILE): pause accepting rather than spin on a
        // listener that stays readable.
        core.logger.error("accept failed", ["error": .string("\(error)")])
        pause()
        return
      }
      guard let accepted else { return }
      core.connectionOpened()
      let target = registries[next % registries.count]
      next &+= 1
      let context = tls.current
      let core = self.core
      let maxFrame = core.config.maxFrameSize
      target.execute { registry in
        do {
          let tls = try TLSConnection(
            fd: accepted.fd, context: context, loop: registry.loop, peer: accepted.peer,
            maxFrameSize: maxFrame)
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
  }

  private func pause() {
    if registration != 0 { loop.deregister(fd: fd, registration: registration) }
    registration = 0
    loop.schedule(afterNanos: 100_000_000) { [weak self] in
      guard let self, !closed else { return }
      do {
        try start()
      } catch {
        // Never stop accepting for good: say so and try again.
        core.logger.error("listener re-registration failed", ["error": .string("\(error)")])
        pause()
      }
    }
  }

  /// Stops accepting: the first step of graceful shutdown.
  func close() {
    guard !closed else { return }
    closed = true
    if registration != 0 { loop.deregister(fd: fd, registration: registration) }
    Socket.close(fd)
  }
}
