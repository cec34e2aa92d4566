@testable import AnonAuthServer

/// Runs a `GRPCLocalMethod` with no transport: the test feeds request messages and
/// reads each response as the method sends it. One test task uses it (not Sendable).
final class GRPCLocalMethodHarness {
  private let requests: AsyncStream<[UInt8]>
  private let requestInput: AsyncStream<[UInt8]>.Continuation
  private let responseInput: AsyncStream<[UInt8]>.Continuation
  private var responses: AsyncStream<[UInt8]>.Iterator
  private var task: Task<GRPCFinalStatus, Never>?

  init() {
    (requests, requestInput) = AsyncStream.makeStream(of: [UInt8].self)
    let (responseStream, responseInput) = AsyncStream.makeStream(of: [UInt8].self)
    self.responseInput = responseInput
    responses = responseStream.makeAsyncIterator()
  }

  func start(_ method: any GRPCLocalMethod) {
    let requests = self.requests
    let responseInput = self.responseInput
    let writer = GRPCResponseWriter { bytes in
      responseInput.yield(bytes)
      return true
    }
    task = Task {
      let status = await method.run(requests: requests, responses: writer)
      responseInput.finish()
      return status
    }
  }

  func send(_ message: [UInt8]) { requestInput.yield(message) }
  func halfClose() { requestInput.finish() }

  /// The next response, or nil once the call is over.
  func next() async -> [UInt8]? {
    await responses.next()
  }

  func cancel() { task?.cancel() }

  func finalStatus() async -> GRPCFinalStatus? {
    await task?.value
  }

  /// A unary call: one request, half-close, every response and the status.
  static func unary(_ method: any GRPCLocalMethod, _ request: [UInt8]) async -> ([[UInt8]], GRPCFinalStatus?)
  {
    let harness = GRPCLocalMethodHarness()
    harness.start(method)
    harness.send(request)
    harness.halfClose()
    var responses: [[UInt8]] = []
    while let response = await harness.next() { responses.append(response) }
    return (responses, await harness.finalStatus())
  }
}
