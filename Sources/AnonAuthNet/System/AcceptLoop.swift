/// A listening socket watched by an event loop, handing each accepted connection to
/// `onAccept`. When accepting fails (out of descriptors: EMFILE, ENFILE) it stops
/// watching for 100 ms and tries again, instead of spinning on a socket that stays
/// readable; it never stops accepting for good. Confined to its loop.
///
/// At most `acceptsPerTurn` connections are taken per loop turn: each costs a TLS object
/// and a first handshake step, and a flood of a thousand connects taken at once held every
/// other connection of the loop for tens of milliseconds. The listener is watched
/// level-triggered, so what is left is announced again on the next turn, after the
/// others' events.
public final class AcceptLoop: EventHandler {
  private let fd: Int32
  private let loop: EventLoop
  private let onAccept: (_ fd: Int32, _ peer: SocketAddress?) -> Void
  private let onError: (String) -> Void
  private var registration: UInt64 = 0
  private var closed = false

  /// Takes ownership of the listening `fd`.
  /// - Parameter onError: told why accepting paused, for the log.
  public init(
    fd: Int32, loop: EventLoop, onAccept: @escaping (_ fd: Int32, _ peer: SocketAddress?) -> Void,
    onError: @escaping (String) -> Void
  ) {
    self.fd = fd
    self.loop = loop
    self.onAccept = onAccept
    self.onError = onError
  }

  public func start() throws(SystemError) {
    registration = try loop.register(fd: fd, events: .readable, handler: self)
  }

  /// How many connections one loop turn accepts.
  public static let acceptsPerTurn = 32

  public func handleEvents(_ events: IOEvents) {
    var accepts = 0
    while !closed, accepts < Self.acceptsPerTurn {
      accepts += 1
      let accepted: (fd: Int32, peer: SocketAddress?)?
      do {
        accepted = try Socket.accept(fd)
      } catch {
        onError("accept: \(error)")
        pause()
        return
      }
      guard let accepted else { return }
      onAccept(accepted.fd, accepted.peer)
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
        onError("re-registration: \(error)")
        pause()
      }
    }
  }

  /// Stops accepting and closes the socket.
  public func close() {
    guard !closed else { return }
    closed = true
    if registration != 0 { loop.deregister(fd: fd, registration: registration) }
    registration = 0
    Socket.close(fd)
  }
}
