/// Something registered with an `EventLoop` for readiness events on one descriptor.
/// Called on the loop's thread only.
public protocol EventHandler: AnyObject {
  func handleEvents(_ events: IOEvents)
}

/// epoll readiness bits, named.
public struct IOEvents: OptionSet, Sendable {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }

  public static let readable = IOEvents(rawValue: 0x001)  // EPOLLIN
  public static let writable = IOEvents(rawValue: 0x004)  // EPOLLOUT
  public static let error = IOEvents(rawValue: 0x008)  // EPOLLERR
  public static let hangup = IOEvents(rawValue: 0x010)  // EPOLLHUP
  public static let readHangup = IOEvents(rawValue: 0x2000)  // EPOLLRDHUP
}
