import AnonAuthNet
import Foundation
import Synchronization

/// The loop-confined side of `HTTPFleet`: its connections, the warm-up and the rounds.
/// Each connection carries one request at a time; its answer records the latency and
/// sends the next request while the round lasts. A connection the server closed (or
/// that failed) is opened again at its next request. Everything runs on the fleet's loop.
final class HTTPFleetDriver {
  /// Connections reopened during rounds, readable from any thread.
  final class Counter: Sendable {
    let value = Atomic<Int>(0)
  }

  /// What the fleet is doing: nothing, the warm-up, or a round.
  private enum Phase {
    case idle
    case warmUp(left: Int, failure: String?, done: (String?) -> Void)
    case round(end: ContinuousClock.Instant, recorder: LatencyRecorder, left: Int, done: () -> Void)
  }

  private let target: HTTPFleet.Target
  private let loop: EventLoop
  private let address: SocketAddress
  private let request: @Sendable () -> [UInt8]
  private let failureReason: @Sendable (HTTPResponse) -> String?
  private let reconnects: Counter
  private var slots: [HTTPFleetConnection?]
  private var phase = Phase.idle

  init(
    target: HTTPFleet.Target, loop: EventLoop, address: SocketAddress, count: Int,
    request: @escaping @Sendable () -> [UInt8],
    failureReason: @escaping @Sendable (HTTPResponse) -> String?, reconnects: Counter
  ) {
    self.target = target
    self.loop = loop
    self.address = address
    self.request = request
    self.failureReason = failureReason
    self.reconnects = reconnects
    slots = Array(repeating: nil, count: count)
  }

  /// Opens every connection and sends each one request; `done` gets the first failure.
  func warmUp(done: @escaping (String?) -> Void) {
    guard !slots.isEmpty else { return done(nil) }
    phase = .warmUp(left: slots.count, failure: nil, done: done)
    for slot in slots.indices {
      do {
        let connection = try open(slot)
        connection.send(request(), timeoutMs: target.timeoutMs)
      } catch {
        warmedUp(failure: "cannot open a connection: \(error)")
      }
    }
  }

  /// Runs every connection until `end`; `done` runs once the last one stops.
  func round(until end: ContinuousClock.Instant, recorder: LatencyRecorder, done: @escaping () -> Void) {
    guard !slots.isEmpty else { return done() }
    phase = .round(end: end, recorder: recorder, left: slots.count, done: done)
    for slot in slots.indices { next(slot) }
  }

  func closeAll() {
    phase = .idle
    for slot in slots.indices {
      slots[slot]?.close()
      slots[slot] = nil
    }
  }

  // MARK: Connections' events

  /// A whole response came on the connection of `slot`.
  func answered(_ slot: Int, _ response: HTTPResponse, nanos: UInt64) {
    if !HTTPKeepAlive.keepsConnection(response) { drop(slot) }
    switch phase {
    case .idle:
      break
    case .warmUp:
      warmedUp(failure: failureReason(response).map { "HTTP \(response.status) \($0)" })
    case .round(_, let recorder, _, _):
      if let reason = failureReason(response) {
        recorder.fail(reason: reason, detail: "HTTP \(response.status): \(reason)")
      } else {
        recorder.record(nanos: nanos)
      }
      next(slot)
    }
  }

  /// The connection of `slot` closed or failed with its request unanswered.
  func failed(_ slot: Int, _ why: String) {
    drop(slot)
    switch phase {
    case .idle:
      break
    case .warmUp:
      warmedUp(failure: why)
    case .round(_, let recorder, _, _):
      recorder.fail(reason: "HTTP_TRANSPORT", detail: why)
      next(slot)
    }
  }

  /// The connection of `slot` closed between requests: the next one reopens it.
  func closedIdle(_ slot: Int) { drop(slot) }

  // MARK: Private

  private func warmedUp(failure: String?) {
    guard case .warmUp(let left, let first, let done) = phase else { return }
    let failure = first ?? failure
    guard left > 1 else {
      phase = .idle
      return done(failure)
    }
    phase = .warmUp(left: left - 1, failure: failure, done: done)
  }

  /// Sends the next request of `slot`'s connection while the round lasts (reopening the
  /// connection when it is gone); else counts the connection as stopped.
  private func next(_ slot: Int) {
    guard case .round(let end, let recorder, let left, let done) = phase else { return }
    guard ContinuousClock.now < end else {
      guard left > 1 else {
        phase = .idle
        return done()
      }
      phase = .round(end: end, recorder: recorder, left: left - 1, done: done)
      return
    }
    let connection: HTTPFleetConnection
    if let open = slots[slot] {
      connection = open
    } else {
      reconnects.value.add(1, ordering: .relaxed)
      do {
        connection = try open(slot)
      } catch {
        recorder.fail(reason: "HTTP_CONNECT", detail: "cannot reopen a connection: \(error)")
        _ = loop.schedule(afterNanos: 10_000_000) { [weak self] in self?.next(slot) }
        return
      }
    }
    connection.send(request(), timeoutMs: target.timeoutMs)
  }

  private func drop(_ slot: Int) {
    slots[slot]?.close()
    slots[slot] = nil
  }

  private func open(_ slot: Int) throws -> HTTPFleetConnection {
    let fd = try Socket.connect(to: address)
    let tls = try TLSConnection(
      fd: fd, context: target.context, loop: loop, peer: address, connecting: true,
      serverName: target.host)
    let connection = HTTPFleetConnection(tls: tls, slot: slot, driver: self)
    tls.delegate = connection
    tls.handshakeDelegate = connection
    tls.start()
    slots[slot] = connection
    return connection
  }
}
