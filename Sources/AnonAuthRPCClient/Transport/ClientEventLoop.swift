import AnonAuthNet
import Synchronization

/// One event-loop thread shared by every client in the process, started on first use.
enum ClientEventLoop {
  private static let shared = Mutex<EventLoop?>(nil)

  static func get() throws -> EventLoop {
    try shared.withLock { loop in
      if let loop { return loop }
      let made = try EventLoop(name: "anonauth-client")
      made.start()
      loop = made
      return made
    }
  }
}
