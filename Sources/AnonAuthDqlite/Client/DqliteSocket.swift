import Glibc

/// A blocking TCP connection to a dqlite node, with timeouts on connect, send and receive
/// so that a node that died without closing cannot hang its caller.
///
/// One thread uses it at a time (its owner, a `DqliteConnection`).
final class DqliteSocket {
  private var fd: Int32

  /// Connects to "host:port" ("[v6]:port" for an IPv6 literal); a DNS name is resolved
  /// and each of its addresses tried in turn.
  init(address: String, timeoutMs: Int) throws(DqliteError) {
    fd = try Self.connectedDescriptor(to: address, timeoutMs: timeoutMs)
    var timeout = timeval(tv_sec: timeoutMs / 1000, tv_usec: (timeoutMs % 1000) * 1000)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  /// A blocking, close-on-exec stream socket to the node at `address`, which may name a
  /// host: also what the embedded node's Raft transport connects with (libdqlite's own
  /// takes numeric addresses only). `ClusterDialer` picks the way: this process's own
  /// node directly, others over TLS (or plain TCP with `--cluster-insecure`).
  static func connectedDescriptor(to address: String, timeoutMs: Int) throws(DqliteError) -> Int32 {
    try ClusterDialer.shared.connect(to: address, timeoutMs: timeoutMs)
  }

  /// A blocking, close-on-exec TCP socket connected to `address` (names resolved, each
  /// of their addresses tried in turn).
  static func tcpDescriptor(to address: String, timeoutMs: Int) throws(DqliteError) -> Int32 {
    let (host, port) = try split(address)
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_family = AF_UNSPEC
    var list: UnsafeMutablePointer<addrinfo>?
    let rc = getaddrinfo(host, port, &hints, &list)
    guard rc == 0, let list else {
      throw .io("resolve \(address): \(String(cString: gai_strerror(rc)))")
    }
    defer { freeaddrinfo(list) }
    var lastError = "no address"
    var entry: UnsafeMutablePointer<addrinfo>? = list
    while let current = entry {
      entry = current.pointee.ai_next
      let candidate = socket(
        current.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard candidate >= 0 else {
        lastError = "socket: \(String(cString: strerror(errno)))"
        continue
      }
      // From the node's own address when it listens on one (`OutgoingSource`).
      if let destination = current.pointee.ai_addr { OutgoingSource.bind(candidate, towards: destination) }
      if let failure = connect(candidate, current.pointee.ai_addr, current.pointee.ai_addrlen, timeoutMs) {
        lastError = failure
        Glibc.close(candidate)
        continue
      }
      // Requests and Raft messages are small and answered at once: Nagle's algorithm
      // against delayed ACKs would add tens of milliseconds to each exchange.
      var one: Int32 = 1
      _ = setsockopt(candidate, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
      return candidate
    }
    throw .io("connect \(address): \(lastError)")
  }

  deinit { close() }

  var isOpen: Bool { fd >= 0 }

  func close() {
    if fd >= 0 { Glibc.close(fd) }
    fd = -1
  }

  /// Ends the stream both ways but keeps the descriptor, as a peer that went away leaves
  /// it: the owner finds out at its next send or receive.
  func shutDown() {
    if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
  }

  func send(_ bytes: [UInt8]) throws(DqliteError) {
    guard fd >= 0 else { throw .io("connection closed") }
    var sent = 0
    while sent < bytes.count {
      let n = bytes.withUnsafeBytes { raw in
        Glibc.send(fd, raw.baseAddress.map { $0 + sent }, bytes.count - sent, Int32(MSG_NOSIGNAL))
      }
      if n < 0 {
        if errno == EINTR { continue }
        throw failed("send")
      }
      sent += n
    }
  }

  /// The error of a `send` or `recv` that failed with `errno` (EAGAIN: the socket's
  /// timeout ran out), once the socket is closed: the stream is out of step.
  private func failed(_ call: String) -> DqliteError {
    let reason = errno == EAGAIN ? "\(call) timed out" : "\(call): \(String(cString: strerror(errno)))"
    close()
    return .io(reason)
  }

  func receive(_ count: Int) throws(DqliteError) -> [UInt8] {
    guard fd >= 0 else { throw .io("connection closed") }
    acknowledgeAtOnce()
    var bytes = [UInt8](repeating: 0, count: count)
    var received = 0
    while received < count {
      let n = bytes.withUnsafeMutableBytes { raw in
        recv(fd, raw.baseAddress.map { $0 + received }, count - received, 0)
      }
      if n == 0 {
        close()
        throw .io("the node closed the connection")
      }
      if n < 0 {
        if errno == EINTR { continue }
        throw failed("receive")
      }
      received += n
      acknowledgeAtOnce()
    }
    return bytes
  }

  /// Asks the kernel to acknowledge what has arrived at once instead of delaying the ACK,
  /// before and after every read (Linux falls back to delayed ACKs by itself).
  ///
  /// libdqlite 1.11 leaves Nagle's algorithm on for the connections it accepts: when
  /// pipelined requests are answered one after another, it holds each answer back until
  /// the one before is acknowledged, and a delayed ACK made every such wait about 40 ms
  /// (measured: 134 ms per sign-up at 5 sign-ups/s on an idle three-node cluster).
  private func acknowledgeAtOnce() {
    var one: Int32 = 1
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
  }

  /// `host` and `port` resolved for a listening TCP socket (passive, either family):
  /// getaddrinfo's return code and, on success, the list to free with `freeaddrinfo`.
  static func resolvePassive(_ host: String, _ port: String) -> (
    rc: Int32, list: UnsafeMutablePointer<addrinfo>?
  ) {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_family = AF_UNSPEC
    hints.ai_flags = AI_PASSIVE
    var list: UnsafeMutablePointer<addrinfo>?
    let rc = getaddrinfo(host, port, &hints, &list)
    return (rc, list)
  }

  /// Which step of making a listening socket failed, and the system's reason.
  struct ListenFailure: Error {
    enum Step { case resolve, socket, bind }
    let step: Step
    let reason: String
  }

  /// A TCP socket bound to `host` and `port` (their first address) and listening with
  /// `backlog`. SO_REUSEADDR is set as libdqlite sets it, so a port whose earlier
  /// connections linger in TIME_WAIT after a restart can be taken again.
  static func listening(_ host: String, _ port: String, backlog: Int32) -> Result<Int32, ListenFailure> {
    let (rc, resolved) = resolvePassive(host, port)
    guard rc == 0, let list = resolved else {
      return .failure(ListenFailure(step: .resolve, reason: String(cString: gai_strerror(rc))))
    }
    defer { freeaddrinfo(list) }
    let fd = Glibc.socket(
      list.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else {
      return .failure(ListenFailure(step: .socket, reason: String(cString: strerror(errno))))
    }
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    guard Glibc.bind(fd, list.pointee.ai_addr, list.pointee.ai_addrlen) == 0, Glibc.listen(fd, backlog) == 0
    else {
      let reason = String(cString: strerror(errno))
      Glibc.close(fd)
      return .failure(ListenFailure(step: .bind, reason: reason))
    }
    return .success(fd)
  }

  /// "host:port" or "[v6 literal]:port" as getaddrinfo's two arguments.
  static func split(_ address: String) throws(DqliteError) -> (host: String, port: String) {
    guard let colon = address.lastIndex(of: ":") else { throw .io("address \(address) has no port") }
    var host = String(address[..<colon])
    let port = String(address[address.index(after: colon)...])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty, let number = Int(port), (1...65535).contains(number) else {
      throw .io("address \(address) is not host:port")
    }
    return (host, port)
  }

  /// A connect bounded by `timeoutMs`: non-blocking, polled, then blocking again.
  /// Returns nil on success or why it failed.
  private static func connect(
    _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, _ timeoutMs: Int
  ) -> String? {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    defer { _ = fcntl(fd, F_SETFL, flags) }
    if Glibc.connect(fd, address, length) == 0 { return nil }
    guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    let ready = poll(&poller, 1, Int32(clamping: timeoutMs))
    if ready == 0 { return "timed out" }
    if ready < 0 { return String(cString: strerror(errno)) }
    var error: Int32 = 0
    var size = socklen_t(MemoryLayout<Int32>.size)
    _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
    return error == 0 ? nil : String(cString: strerror(error))
  }
}
