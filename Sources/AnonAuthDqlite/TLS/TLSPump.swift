import COpenSSL
import Foundation
import Glibc

/// Carries bytes both ways between a TLS connection and a plain stream socket (the dqlite
/// node's abstract socket, or the end of a socket pair that libdqlite or the store's
/// client reads and writes), until either side closes; then closes both.
///
/// Backpressure: at most `bufferBytes` wait in each direction; while a direction's
/// buffer is full, nothing more is read from its source, so a slow reader slows its
/// writer instead of growing memory. One thread per connection with non-blocking sockets
/// and poll: a blocking write in one direction could otherwise deadlock against the peer's
/// pump blocked writing the other way.
enum TLSPump {
  static let bufferBytes = 64 * 1024

  /// The pointer moved to the pump's thread. Safe to send: the thread that hands it over
  /// never touches it again; the pump alone uses and frees it.
  struct Owned: @unchecked Sendable {
    let ssl: OpaquePointer
  }

  /// Runs `run` on a thread of its own.
  static func start(ssl: OpaquePointer, tls: Int32, plain: Int32, name: String) {
    let owned = Owned(ssl: ssl)
    let thread = Thread { run(ssl: owned.ssl, tls: tls, plain: plain) }
    thread.name = name
    thread.stackSize = 256 * 1024
    thread.start()
  }

  /// Pumps until either side ends; frees `ssl` and closes `tls` and `plain`.
  static func run(ssl: OpaquePointer, tls: Int32, plain: Int32) {
    defer {
      SSL_free(ssl)
      Glibc.close(tls)
      Glibc.close(plain)
    }
    for fd in [tls, plain] {
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    var toPlain = Buffer()
    var toTLS = Buffer()
    var scratch = [UInt8](repeating: 0, count: bufferBytes)
    var plainEnded = false
    while true {
      var progress = false
      var tlsEvents: Int16 = 0
      var plainEvents: Int16 = 0

      // TLS -> plain
      if toPlain.count < bufferBytes {
        let room = bufferBytes - toPlain.count
        let n = scratch.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32(room)) }
        if n > 0 {
          toPlain.append(scratch, count: Int(n))
          progress = true
        } else {
          switch SSL_get_error(ssl, n) {
          case SSL_ERROR_WANT_READ: tlsEvents |= Int16(POLLIN)
          case SSL_ERROR_WANT_WRITE: tlsEvents |= Int16(POLLOUT)
          default:
            // The peer closed (close_notify or not), or a TLS error: flush what was
            // decrypted, then stop.
            _ = toPlain.drainBlocking(into: plain)
            return
          }
        }
      }
      if !toPlain.isEmpty {
        switch toPlain.write(to: plain) {
        case .wrote: progress = true
        case .wouldBlock: plainEvents |= Int16(POLLOUT)
        case .failed: return
        }
      }

      // plain -> TLS
      if !plainEnded && toTLS.count < bufferBytes {
        let room = bufferBytes - toTLS.count
        let n = scratch.withUnsafeMutableBytes { Glibc.read(plain, $0.baseAddress, room) }
        if n > 0 {
          toTLS.append(scratch, count: n)
          progress = true
        } else if n == 0 {
          plainEnded = true
          progress = true
        } else if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
          plainEvents |= Int16(POLLIN)
        } else {
          plainEnded = true
          progress = true
        }
      }
      if !toTLS.isEmpty {
        let n = toTLS.withBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
        if n > 0 {
          toTLS.consume(Int(n))
          progress = true
        } else {
          switch SSL_get_error(ssl, n) {
          case SSL_ERROR_WANT_READ: tlsEvents |= Int16(POLLIN)
          case SSL_ERROR_WANT_WRITE: tlsEvents |= Int16(POLLOUT)
          default: return
          }
        }
      }
      if plainEnded && toTLS.isEmpty {
        _ = SSL_shutdown(ssl)
        return
      }
      if progress { continue }
      var fds = [
        pollfd(fd: tls, events: tlsEvents, revents: 0), pollfd(fd: plain, events: plainEvents, revents: 0),
      ]
      let ready = poll(&fds, 2, -1)
      if ready < 0 && errno != EINTR { return }
      // A hang-up or error on a side we are not waiting to read or write would wake poll
      // again at once: the connection is over.
      for entry in fds where entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
        if entry.revents & entry.events == 0 { return }
      }
    }
  }

  /// Bytes waiting in one direction: appended at the end, written from the front.
  struct Buffer {
    private var bytes: [UInt8] = []
    private var start = 0

    var count: Int { bytes.count - start }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ source: [UInt8], count: Int) {
      if start > 0 && start == bytes.count {
        bytes.removeAll(keepingCapacity: true)
        start = 0
      }
      bytes.append(contentsOf: source[0..<count])
    }

    mutating func consume(_ n: Int) {
      start += n
      if start == bytes.count {
        bytes.removeAll(keepingCapacity: true)
        start = 0
      }
    }

    func withBytes<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
      bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }

    enum WriteResult { case wrote, wouldBlock, failed }

    mutating func write(to fd: Int32) -> WriteResult {
      let n = withBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      if n > 0 {
        consume(n)
        return .wrote
      }
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .wouldBlock : .failed
    }

    /// Writes what is left before the pump stops, waiting for room at most a moment.
    mutating func drainBlocking(into fd: Int32) -> Bool {
      while !isEmpty {
        switch write(to: fd) {
        case .wrote: continue
        case .failed: return false
        case .wouldBlock:
          var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
          guard poll(&entry, 1, 5_000) > 0 else { return false }
        }
      }
      return true
    }
  }
}
