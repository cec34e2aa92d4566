/// A listening socket watched by an event loop, handing each accepted connection to
/// `onAccept`. When accepting fails (out of descriptors: EMFILE, ENFILE) it stops
/// watching for 100 ms and tries again, instead of spinning on a socket that stays
/// readable; it never stops accepting for good. Confined to its loop.
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

  public func handleEvents(_ events: IOEvents) {
    while !closed {
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
