import AnonAuthNet
import AnonAuthService
import AnonAuthWire

/// The calls of one connection, whatever transport carries them (`anonauth/1` frames,
/// HTTP/1.1 requests, HTTP/2 streams): each call takes one of the connection's slots and
/// its payload is charged to the byte budgets (`CallSlots`), runs in its own task, is
/// answered once (by its task, or at its deadline, when the task is cancelled), and is
/// cancelled when the peer gives up on it or the connection closes. A transport turns its
/// wire into `startCall`/`startTask` and answers into its wire; the rules live here once.
///
/// Confined to the connection's loop thread, like the connection that owns it.
final class ConnectionCalls {
  /// Whether a call was taken.
  enum Admission: Equatable {
    case admitted
    /// The id is in flight: a protocol error of the peer (the transport decides what
    /// that costs it; `anonauth/1` closes the connection).
    case idInUse
    /// Not started, with the error to answer (`SHUTTING_DOWN`, `TOO_MANY_CALLS`).
    case refused(RPCError)
  }

  private struct Running {
    let task: Task<Void, Never>
    let timer: UInt64?
    /// Answers the call at its deadline; runs at most once, on the loop.
    let expired: () -> Void
  }

  let core: ServerCore
  let loop: EventLoop
  /// The socket peer's IP address (quotas, the trusted-proxy rules) and a verified
  /// client certificate's common name.
  let peerHost: String?
  /// Known once the TLS handshake is done (a transport may exist before it).
  var clientCertificateName: String?
  private var slots: CallSlots<Running>
  /// Set by `drain`: new calls are refused with `SHUTTING_DOWN`.
  private(set) var goingAway = false
  /// Called on the loop each time a task returns and no slot is taken any more: a
  /// draining transport closes then.
  var onAllEnded: (() -> Void)?

  init(core: ServerCore, loop: EventLoop, peerHost: String?, clientCertificateName: String?) {
    self.core = core
    self.loop = loop
    self.peerHost = peerHost
    self.clientCertificateName = clientCertificateName
    slots = CallSlots(
      limit: core.config.maxConcurrentCallsPerConnection, bytes: core.receiveBudget.account(for: peerHost))
  }

  /// Slots taken: calls in flight, and expired or cancelled calls whose task still runs.
  var taken: Int { slots.taken }
  /// Calls still to be answered.
  var unanswered: Int { slots.unanswered }

  /// The most Unicode scalars of a client's `x-request-id` kept (echoed and logged).
  static let maxRequestIDScalars = 128

  /// The call's request id: the client's `x-request-id` cut to 128 Unicode scalars (not
  /// Characters: one Character can be any number of combining scalars, and the id is
  /// echoed and logged), or a new one when it sent none.
  static func requestID(_ sent: String?) -> String {
    guard let sent, !sent.isEmpty else { return RequestID.make() }
    return String(String.UnicodeScalarView(sent.unicodeScalars.prefix(maxRequestIDScalars)))
  }

  /// Starts one unary call through the router: the deadline (`timeoutMs` 0: the
  /// server's default), the metadata rules, the log line and the metrics are the same
  /// for every transport. `answer` runs once on the loop, with the handler's result or
  /// `DEADLINE_EXCEEDED` at the deadline; never after `cancel` or `cancelAll`.
  /// `authenticated` is the router's hook (`CallContext.authenticated`), called off the
  /// loop.
  func startCall(
    id: UInt64, method: String, metadata: [String: String], requestID: String, timeoutMs: UInt32,
    payload: [UInt8], authenticated: (@Sendable (CallCredential) -> Void)? = nil,
    answer: @escaping (Result<[UInt8], RPCError>) -> Void
  ) -> Admission {
    let log = CallLogFields()
    let context = CallContext(
      method: method, metadata: metadata, peerIP: peerHost, requestID: requestID, log: log,
      clientCertificateName: clientCertificateName, authenticated: authenticated)
    let core = core
    let router = core.router
    let startedAt = MonotonicClock.now()
    let admission = startTask(
      id: id, payloadBytes: payload.count,
      timeoutNanos: core.config.effectiveTimeoutMs(requested: timeoutMs) * 1_000_000,
      work: {
        let result: Result<[UInt8], RPCError>
        do throws(RPCError) {
          result = .success(try await router.handle(context, payload: payload))
        } catch {
          result = .failure(error)
        }
        // The line and the metrics are made here, off the event loop: the loop only
        // frames and sends the reply.
        if log.claimLogging() {
          core.logCall(
            method: method, requestID: requestID, result: result, nanos: MonotonicClock.now() - startedAt,
            fields: log)
        }
        return result
      },
      answer: answer,
      expired: {
        let result = Result<[UInt8], RPCError>.failure(
          RPCError(.deadlineExceeded, "the call's deadline passed"))
        answer(result)
        // Logged here only when the deadline passed before the handler finished.
        if log.claimLogging() {
          core.logCall(
            method: method, requestID: requestID, result: result, nanos: MonotonicClock.now() - startedAt,
            fields: log)
        }
      })
    // A call refused before it ran (TOO_MANY_CALLS, SHUTTING_DOWN) is counted and logged
    // like any other, within the log's budget.
    if case .refused(let error) = admission, log.claimLogging() {
      core.logCall(
        method: method, requestID: requestID, result: .failure(error),
        nanos: MonotonicClock.now() - startedAt,
        fields: log)
    }
    return admission
  }

  /// Starts work that is not a router call (an HTTP request of the JSON API, a stream of
  /// a standard gRPC service) under the same rules: a slot, the payload's bytes charged,
  /// a task cancelled at the deadline (`timeoutNanos` nil: none, for long-lived
  /// streams) or when the peer gives up. `answer` runs once on the loop with the work's
  /// value, unless `expired` ran first (at the deadline) or the call was cancelled.
  func startTask<Value: Sendable>(
    id: UInt64, payloadBytes: Int, timeoutNanos: UInt64?, work: @escaping @Sendable () async -> Value,
    answer: @escaping (Value) -> Void, expired: @escaping () -> Void
  ) -> Admission {
    if goingAway { return .refused(RPCError(.shuttingDown, "the server is shutting down")) }
    let bound = LoopBound(self, loop: loop)
    let metrics = core.metrics
    let loop = loop
    let answerBox = UncheckedBox(answer)
    let admission = slots.admit(id, payloadBytes: payloadBytes) { sequence in
      metrics.handlerStarted()
      let task = Task {
        let value = await work()
        metrics.handlerEnded()
        bound.execute { calls in
          calls.taskEnded(id, sequence: sequence) { answerBox.value(value) }
        }
      }
      let timer = timeoutNanos.map { nanos in
        loop.schedule(afterNanos: nanos) { [weak self] in self?.expire(id, sequence: sequence) }
      }
      return Running(task: task, timer: timer, expired: expired)
    }
    switch admission {
    case .admitted:
      return .admitted
    case .idInUse:
      return .idInUse
    case .full:
      return .refused(
        RPCError(.tooManyCalls, "more than \(core.config.maxConcurrentCallsPerConnection) calls in flight"))
    case .overBudget:
      core.metrics.callsOverBufferBudget.add(1, ordering: .relaxed)
      return .refused(RPCError(.tooManyCalls, "too many bytes of calls in flight from this address"))
    }
  }

  /// The task returned: frees the slot and, when the call is still to be answered,
  /// answers it. The answer goes before `onAllEnded`, so that a draining transport that
  /// closes there has queued the last reply first.
  private func taskEnded(_ id: UInt64, sequence: UInt64, answer: () -> Void) {
    if let running = slots.taskEnded(id, sequence: sequence) {
      if let timer = running.timer { loop.cancelTimer(timer) }
      answer()
    }
    if slots.taken == 0 { onAllEnded?() }
  }

  /// The deadline passed: answered now, the task cancelled; the slot stays taken until
  /// the task returns. Answered (and its log line claimed) before the cancel: a handler
  /// woken by the cancel returns at once, and its task would otherwise log its own
  /// result for a call the client saw expire.
  private func expire(_ id: UInt64, sequence: UInt64) {
    guard let running = slots.expire(id, sequence: sequence) else { return }
    running.expired()
    running.task.cancel()
  }

  /// The peer gave up on call `id` (an HTTP/2 stream reset): its task is cancelled and it
  /// is never answered; its slot is held until the task returns.
  func cancel(id: UInt64) {
    guard let running = slots.abandon(id) else { return }
    if let timer = running.timer { loop.cancelTimer(timer) }
    running.task.cancel()
  }

  /// The connection closed or failed: every task is cancelled, nothing is answered, and
  /// the budgets get their bytes back.
  func cancelAll() {
    for running in slots.removeAll() {
      running.task.cancel()
      if let timer = running.timer { loop.cancelTimer(timer) }
    }
  }

  /// Graceful shutdown: calls from now on are refused with `SHUTTING_DOWN`; those in
  /// flight run to their answer. The transport tells its peer (GoAway, GOAWAY,
  /// `Connection: close`) and closes when `taken` is 0 (`onAllEnded`).
  func drain() {
    goingAway = true
  }
}
