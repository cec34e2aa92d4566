import AnonAuthNet
import AnonAuthService
import AnonAuthWire
import Synchronization

/// What every connection of one server shares: settings, router, logger, and the count
/// of open connections that graceful shutdown waits on.
final class ServerCore: Sendable {
  let config: RPCServerConfig
  let router: Router
  let logger: Logger
  let metrics: ServerMetrics
  /// What serves HTTP/1.1 requests; nil: every request is answered 404.
  let httpApplication: (any HTTPApplication)?
  /// The methods gRPC streams reach besides the router's (health, reflection).
  let grpcMethods: GRPCLocalMethods
  /// Makes what serves one HTTP/2 connection's gRPC streams (`content-type:
  /// application/grpc...`); called on the connection's loop, once per connection that
  /// has a gRPC stream. nil: every gRPC stream is answered trailers-only with
  /// `grpc-status` 12 (UNIMPLEMENTED).
  let makeGRPCHandler: (@Sendable () -> any HTTP2StreamHandler)?
  /// Returns freed heap to the system after bursts of closed connections.
  let trimmer = MemoryTrimmer()
  /// The process's and each peer IP's budget of partly received bytes.
  let receiveBudget: ReceiveBudget
  /// How many call log lines may be written (nil: all of them).
  private let callLogBudget: LogBudget?
  private let open = Mutex<OpenConnections>(OpenConnections())

  private struct OpenConnections {
    var count = 0
    var draining = false
    var abandoned = false
    var waiter: CheckedContinuation<Void, Never>?
  }

  init(
    config: RPCServerConfig, router: Router, logger: Logger, metrics: ServerMetrics,
    httpApplication: (any HTTPApplication)? = nil, grpcMethods: GRPCLocalMethods = GRPCLocalMethods(),
    makeGRPCHandler: (@Sendable () -> any HTTP2StreamHandler)? = nil
  ) {
    self.config = config
    self.httpApplication = httpApplication
    self.grpcMethods = grpcMethods
    self.makeGRPCHandler = makeGRPCHandler
    self.router = router
    self.logger = logger
    self.metrics = metrics
    receiveBudget = ReceiveBudget(
      maxBytes: config.maxBufferedBytes, maxBytesPerIP: config.maxBufferedBytesPerIP,
      exempt: config.perIPExempt)
    metrics.watch(budget: receiveBudget)
    let rate = config.maxCallLogLinesPerSecond
    callLogBudget =
      rate > 0 ? LogBudget(burst: 2 * rate, intervalNs: max(1, 1_000_000_000 / UInt64(rate))) : nil
  }

  var openConnections: Int { open.withLock { $0.count } }

  /// Charges what the socket holds for its peer (bytes written that the peer has not
  /// taken) to the process's and the peer's byte budgets, whatever transport owns the
  /// connection; given back as it drains and at the close. Loop thread only.
  func chargeQueuedOutput(of stream: SocketStream) {
    let account = receiveBudget.account(for: stream.peer?.host)
    stream.queuedOutputObserver = { bytes in _ = account.force(to: bytes) }
  }

  func connectionOpened() {
    open.withLock { $0.count += 1 }
    metrics.connectionsOpened.add(1, ordering: .relaxed)
  }

  /// Called on the connection's loop once it is closed; `heldPeakBytes`: the most it
  /// held for its peer at once (answers queued behind closed windows), which makes a
  /// trim due sooner than a count of closes would.
  func connectionClosed(heldPeakBytes: Int = 0) {
    metrics.connectionsClosed.add(1, ordering: .relaxed)
    trimmer.connectionClosed(heldPeakBytes: heldPeakBytes)
    let waiter = open.withLock { state -> CheckedContinuation<Void, Never>? in
      state.count -= 1
      guard state.draining, state.count == 0 else { return nil }
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume()
  }

  /// Waits until every connection has closed (after `beginDraining`).
  func waitForAllClosed() async {
    await withCheckedContinuation { continuation in
      let ready = open.withLock { state -> Bool in
        state.draining = true
        if state.count == 0 || state.abandoned { return true }
        state.waiter = continuation
        return false
      }
      if ready { continuation.resume() }
    }
  }

  /// Wakes a `waitForAllClosed` that is still waiting (the grace period ran out).
  func abandonWaiting() {
    let waiter = open.withLock { state -> CheckedContinuation<Void, Never>? in
      state.abandoned = true
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume()
  }

  /// The call's metrics and its one log line; `fields` adds what the handler reported
  /// (project, uid, `is_anon`).
  func logCall(
    method: String, requestID: String, result: Result<[UInt8], RPCError>, nanos: UInt64,
    fields: CallLogFields
  ) {
    let code: StatusCode
    let reason: String
    switch result {
    case .success:
      code = .ok
      reason = ""
    case .failure(let error):
      code = error.code
      reason = error.reason
    }
    // Unknown method names come from clients: never let them become metric labels.
    metrics.recordCall(method: router.knows(method) ? method : "unknown", code: code, nanos: nanos)
    guard logger.isEnabled(.info) else { return }
    var suppressed = 0
    if let callLogBudget {
      guard let count = callLogBudget.take() else {
        metrics.callLogLinesSuppressed.add(1, ordering: .relaxed)
        return
      }
      suppressed = count
    }
    var line = fields.logFields
    if suppressed > 0 { line["suppressed"] = .int(Int64(suppressed)) }
    line["request_id"] = .string(requestID)
    line["method"] = .string(method)
    line["code"] = .int(Int64(code.rawValue))
    line["reason"] = .string(reason)
    line["duration_ms"] = .double(Double(nanos) / 1e6)
    logger.info("call", line)
  }
}
