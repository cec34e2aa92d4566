import COpenSSL
import CShims
import Foundation
import Glibc
import Synchronization

/// The cluster port (`--cluster-listen`) when the cluster runs with TLS: accepts TCP,
/// completes a TLS 1.3 handshake that requires a client certificate chaining to the
/// cluster CA, and only then connects to the node's abstract socket and pumps bytes both
/// ways. A peer with no certificate, one from another CA, or an expired one fails the
/// handshake; the node never sees a byte from it.
///
/// One thread accepts; each connection gets a thread for its handshake (bounded by
/// `handshakeTimeoutMs`, and at most `maxHandshakes` at once) and then its pump. Cluster
/// connections are few and long-lived (each peer's Raft link, each daemon's store
/// links), so threads are cheap enough here.
public final class ClusterGateway: Sendable {
  /// The port bound.
  public let port: Int
  private let listener: Int32
  private let nodeSocket: String
  private let tls: ClusterTLSSlot
  private let handshakeTimeoutMs: Int
  private let stopped = Atomic<Bool>(false)
  private let started = Atomic<Bool>(false)
  /// Handshakes under way, and how many may be: beyond it a new connection is closed at
  /// once, so that peers that connect and say nothing cannot hold a thread each.
  private let handshakes = Atomic<Int>(0)
  private let maxHandshakes: Int
  private let refused = Atomic<Int>(0)
  private let onRefused: @Sendable (String) -> Void

  /// Handshakes refused since start (no certificate, another CA, expired, not TLS, or
  /// too many under way).
  public var refusedHandshakes: Int { refused.load(ordering: .relaxed) }

  /// Handshakes under way now.
  var pendingHandshakes: Int { handshakes.load(ordering: .relaxed) }

  /// Binds `listen` ("host:port", IPv4 or IPv6, names resolved) and listens; `start`
  /// begins accepting.
  public init(
    listen: String, nodeSocket: String, tls: ClusterTLSSlot, handshakeTimeoutMs: Int = 10_000,
    maxHandshakes: Int = 64,
    onRefused: @escaping @Sendable (String) -> Void = { _ in }
  ) throws(DqliteError) {
    let (host, portText) = try DqliteSocket.split(listen)
    let fd: Int32
    switch DqliteSocket.listening(host, portText, backlog: 128) {
    case .success(let listening):
      fd = listening
    case .failure(let failure):
      switch failure.step {
      case .resolve: throw .io("resolve \(listen): \(failure.reason)")
      case .socket: throw .io("socket: \(failure.reason)")
      case .bind: throw .io("cannot listen on \(listen): \(failure.reason)")
      }
    }
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    let family = Int32(storage.ss_family)
    port = withUnsafePointer(to: &storage) { pointer in
      family == AF_INET6
        ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
          Int(UInt16(bigEndian: $0.pointee.sin6_port))
        }
        : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
          Int(UInt16(bigEndian: $0.pointee.sin_port))
        }
    }
    listener = fd
    self.nodeSocket = nodeSocket
    self.tls = tls
    self.handshakeTimeoutMs = handshakeTimeoutMs
    self.maxHandshakes = maxHandshakes
    self.onRefused = onRefused
  }

  public func start() {
    guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
    let thread = Thread { [self] in acceptLoop() }
    thread.name = "cluster-gateway"
    thread.start()
  }

  /// Stops accepting. Open connections end when the node stops (their pumps see it close).
  public func stop() {
    guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
    // shutdown wakes the thread blocked in accept; it closes the descriptor as it leaves.
    _ = shutdown(listener, Int32(SHUT_RDWR))
    // Never started: no accept loop to close it.
    if !started.exchange(true, ordering: .acquiringAndReleasing) { Glibc.close(listener) }
  }

  deinit { stop() }

  private func acceptLoop() {
    defer { Glibc.close(listener) }
    while !stopped.load(ordering: .acquiring) {
      let fd = anonauth_accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
      if fd < 0 {
        if stopped.load(ordering: .acquiring) { return }
        if errno == EINTR || errno == ECONNABORTED { continue }
        // Out of descriptors or memory: wait a moment rather than spin.
        usleep(50_000)
        continue
      }
      guard handshakes.add(1, ordering: .relaxed).newValue <= maxHandshakes else {
        handshakes.subtract(1, ordering: .relaxed)
        refused.add(1, ordering: .relaxed)
        Glibc.close(fd)
        continue
      }
      let thread = Thread { [self] in serve(fd) }
      thread.name = "cluster-gateway-conn"
      thread.stackSize = 256 * 1024
      thread.start()
    }
  }

  private func serve(_ fd: Int32) {
    guard let ssl = handshake(fd) else { return }
    let node: Int32
    do {
      node = try AbstractSocket.connect(nodeSocket)
    } catch {
      SSL_free(ssl)
      Glibc.close(fd)
      return
    }
    TLSPump.run(ssl: ssl, tls: fd, plain: node)
  }

  /// The server side of the handshake, counted in `handshakes` while it runs; nil (and
  /// `fd` closed) when it fails.
  private func handshake(_ fd: Int32) -> OpaquePointer? {
    defer { handshakes.subtract(1, ordering: .relaxed) }
    var timeout = timeval(tv_sec: handshakeTimeoutMs / 1000, tv_usec: (handshakeTimeoutMs % 1000) * 1000)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var one: Int32 = 1
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    ERR_clear_error()
    guard let ssl = SSL_new(tls.context.server) else {
      Glibc.close(fd)
      return nil
    }
    guard SSL_set_fd(ssl, fd) == 1, SSL_accept(ssl) == 1 else {
      let error = ClusterTLSContext.error("handshake refused from \(Self.peer(fd))")
      SSL_free(ssl)
      Glibc.close(fd)
      refused.add(1, ordering: .relaxed)
      onRefused("\(error)")
      return nil
    }
    return ssl
  }

  /// "address:port" of the connection's peer, for the log.
  private static func peer(_ fd: Int32) -> String {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let rc = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
    }
    guard rc == 0 else { return "?" }
    var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
    let named = withUnsafePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getnameinfo(
          $0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
          NI_NUMERICHOST | NI_NUMERICSERV)
      }
    }
    guard named == 0 else { return "?" }
    func text(_ bytes: [CChar]) -> String {
      String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    return text(host) + ":" + text(service)
  }
}
