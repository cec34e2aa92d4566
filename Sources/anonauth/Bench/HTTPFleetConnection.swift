import AnonAuthNet
import Foundation

/// One keep-alive HTTP/1.1 connection of an `HTTPFleet`: sends a request, reads its
/// response with `HTTPResponseParser` and hands it to the driver with its latency. A
/// request unanswered within the deadline closes the connection, and so does a server
/// that chose another application protocol than HTTP/1.1. Loop-confined.
final class HTTPFleetConnection: TLSHandshakeDelegate, ByteStreamDelegate {
  private let tls: TLSConnection
  private let slot: Int
  private unowned let driver: HTTPFleetDriver
  private var parser = HTTPResponseParser()
  /// When the request in flight was sent; nil between requests.
  private var sent: ContinuousClock.Instant?
  private var timer: UInt64?
  /// Set once the driver let go of the connection: its later events mean nothing.
  private var detached = false

  init(tls: TLSConnection, slot: Int, driver: HTTPFleetDriver) {
    self.tls = tls
    self.slot = slot
    self.driver = driver
  }

  /// Sends one request; the connection must have none in flight.
  func send(_ bytes: [UInt8], timeoutMs: Int) {
    sent = ContinuousClock.now
    timer = tls.loop.schedule(afterNanos: UInt64(timeoutMs) * 1_000_000) { [weak self] in
      self?.timedOut(timeoutMs)
    }
    tls.send(bytes: bytes)
  }

  /// Lets go of the connection and closes it at once.
  func close() {
    detached = true
    cancelTimer()
    tls.close(error: nil)
  }

  private func timedOut(_ timeoutMs: Int) {
    timer = nil
    guard !detached else { return }
    detached = true
    tls.close(error: nil)
    driver.failed(slot, "no response within \(timeoutMs) ms")
  }

  private func cancelTimer() {
    if let timer { tls.loop.cancelTimer(timer) }
    timer = nil
  }

  // MARK: TLSHandshakeDelegate, ByteStreamDelegate

  func connectionDidHandshake(_ connection: TLSConnection) {
    let chosen = connection.negotiatedProtocol
    guard !detached, chosen != HTTPKeepAlive.applicationProtocol else { return }
    detached = true
    cancelTimer()
    tls.close(error: nil)
    driver.failed(slot, "the server chose ALPN \(chosen ?? "none"), not \(HTTPKeepAlive.applicationProtocol)")
  }

  func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer) {
    guard !detached else { return }
    do {
      try parser.append(bytes)
    } catch {
      detached = true
      cancelTimer()
      tls.close(error: nil)
      driver.failed(slot, error.description)
      return
    }
    guard let response = parser.response, let sent else { return }
    let nanos = LoadRunner.nanos(ContinuousClock.now - sent)
    self.sent = nil
    cancelTimer()
    parser = HTTPResponseParser()
    driver.answered(slot, response, nanos: nanos)
  }

  func streamDidClose(_ stream: any ByteStream, error: (any Error)?) {
    guard !detached else { return }
    detached = true
    cancelTimer()
    if sent != nil {
      driver.failed(slot, error.map { "\($0)" } ?? "the server closed the connection")
    } else {
      driver.closedIdle(slot)
    }
  }
}
