import AnonAuthNet
import AnonAuthService
import AnonAuthWire
import Synchronization

/// A transport with no socket: each call goes to the core through a `ConnectionCalls`, on
/// an event loop thread that watches no descriptor, with the deadline, metadata rules,
/// slot and byte limits, log line and metrics of every other transport. One transport
/// is one connection (its slots, its drain). Tests call the router through it, and the
/// generated stubs take it like any `RPCTransport`.
final class InProcessTransport: RPCTransport {
  typealias Failure = RPCError

  /// The answer to one call: its result and the request id it was given (the one the
  /// native transport echoes in `x-request-id`).
  struct Answer: Sendable {
    let result: Result<[UInt8], RPCError>
    let requestID: String

    /// The error answered, or nil for a payload.
    var error: RPCError? {
      guard case .failure(let error) = result else { return nil }
      return error
    }
  }

  private let connection: LoopBound<InProcessConnection>
  private let nextID = Atomic<UInt64>(1)

  /// - Parameters:
  ///   - loop: a running loop the calls are confined to.
  ///   - peerHost: the address the calls come from (quotas, the trusted-proxy rules).
  init(
    core: ServerCore, loop: EventLoop, peerHost: String? = "127.0.0.1", clientCertificateName: String? = nil
  ) {
    let calls = ConnectionCalls(
      core: core, loop: loop, peerHost: peerHost, clientCertificateName: clientCertificateName)
    connection = LoopBound(InProcessConnection(calls: calls), loop: loop)
  }

  func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: MethodDescriptor<Request, Response>, _ request: Request, metadata: [String: String],
    timeoutMs: UInt32?
  ) async throws(RPCError) -> Response {
    let answer = await call(
      method.path, payload: request.serializedBytes(), metadata: metadata, timeoutMs: timeoutMs ?? 0)
    let payload = try answer.result.get()
    do {
      return try Response(serializedBytes: payload)
    } catch {
      throw RPCError(.internalError, "the response is not a \(Response.self)")
    }
  }

  /// One call as a transport hands it to the core: `timeoutMs` 0 is the server's
  /// default deadline. Cancelling the calling task cancels the call (its handler task
  /// is cancelled and it answers `CANCELLED`), as a reset stream does.
  func call(_ method: String, payload: [UInt8], metadata: [String: String], timeoutMs: UInt32) async -> Answer
  {
    let id = nextID.add(1, ordering: .relaxed).oldValue
    let connection = connection
    let flag = CancelFlag()
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        connection.execute {
          $0.start(
            id: id, method: method, payload: payload, metadata: metadata, timeoutMs: timeoutMs,
            cancelled: flag, continuation: continuation)
        }
      }
    } onCancel: {
      // Set before the cancel is queued: a start that runs after it sees it.
      flag.value.store(true, ordering: .sequentiallyConsistent)
      connection.execute { $0.cancel(id) }
    }
  }

  /// Graceful shutdown of this "connection": calls from now on are refused with
  /// `SHUTTING_DOWN`; those in flight are answered.
  func drain() async {
    await withCheckedContinuation { continuation in
      connection.execute {
        $0.calls.drain()
        continuation.resume()
      }
    }
  }

  /// Slots taken now (calls in flight, and expired or cancelled calls whose handler
  /// task has not returned).
  func slotsTaken() async -> Int {
    await withCheckedContinuation { continuation in
      connection.execute { continuation.resume(returning: $0.calls.taken) }
    }
  }
}

/// Set when the caller's task is cancelled, possibly before its call reached the loop.
private final class CancelFlag: Sendable {
  let value = Atomic<Bool>(false)
}

/// The loop-confined side of an `InProcessTransport`: its calls and the callers waiting
/// on them, each resumed exactly once.
private final class InProcessConnection {
  let calls: ConnectionCalls
  private var waiting:
    [UInt64: (continuation: CheckedContinuation<InProcessTransport.Answer, Never>, requestID: String)] = [:]

  init(calls: ConnectionCalls) {
    self.calls = calls
  }

  func start(
    id: UInt64, method: String, payload: [UInt8], metadata: [String: String], timeoutMs: UInt32,
    cancelled: CancelFlag, continuation: CheckedContinuation<InProcessTransport.Answer, Never>
  ) {
    let requestID = ConnectionCalls.requestID(metadata["x-request-id"])
    waiting[id] = (continuation, requestID)
    if cancelled.value.load(ordering: .sequentiallyConsistent) {
      finish(id, .failure(RPCError(.cancelled, "the caller cancelled the call")))
      return
    }
    let admission = calls.startCall(
      id: id, method: method, metadata: metadata, requestID: requestID, timeoutMs: timeoutMs,
      payload: payload,
      answer: { [weak self] result in self?.finish(id, result) })
    switch admission {
    case .admitted:
      break
    case .idInUse:
      // Ids come from the transport's own counter; never in use.
      finish(id, .failure(RPCError(.internalError, "call id \(id) is already in flight")))
    case .refused(let error):
      finish(id, .failure(error))
    }
  }

  /// The caller gave up: the handler task is cancelled and never answers; the caller
  /// gets `CANCELLED` now (unless it was answered already).
  func cancel(_ id: UInt64) {
    calls.cancel(id: id)
    finish(id, .failure(RPCError(.cancelled, "the caller cancelled the call")))
  }

  private func finish(_ id: UInt64, _ result: Result<[UInt8], RPCError>) {
    guard let waiter = waiting.removeValue(forKey: id) else { return }
    waiter.continuation.resume(
      returning: InProcessTransport.Answer(result: result, requestID: waiter.requestID))
  }
}
