import AnonAuthService

/// `grpc.health.v1.Health/Watch`: the status now, then each change, for as long as the
/// client keeps the stream. A name the server does not serve gets SERVICE_UNKNOWN and
/// the stream stays open (the health protocol: the service may appear later).
///
/// Changes of the process's phase arrive at once (`ServingState.observe`); the store's
/// health has no notification, so it is read again every `storePollInterval`. When the
/// process drains, the watcher gets NOT_SERVING and the call ends with UNAVAILABLE: a
/// stream that lived on would hold the drain for its whole grace period, and UNAVAILABLE
/// is the code on which clients look for another server.
struct GRPCHealthWatch: GRPCLocalMethod {
  let status: GRPCHealthStatus
  var storePollInterval: Duration = .seconds(1)
  let path = "/grpc.health.v1.Health/Watch"
  let hasDefaultDeadline = false

  func run(requests: AsyncStream<[UInt8]>, responses: GRPCResponseWriter) async -> GRPCFinalStatus {
    guard let request = await GRPCUnaryRequest.first(of: requests) else { return GRPCUnaryRequest.missing }
    guard let service = GRPCHealthMessages.service(in: request) else { return GRPCUnaryRequest.undecodable }

    let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let state = status.health.servingState
    let observer = state.observe { _ in wake.yield() }
    let interval = storePollInterval
    let ticker = Task {
      while !Task.isCancelled {
        try? await Task.sleep(for: interval)
        wake.yield()
      }
    }
    defer {
      state.stopObserving(observer)
      ticker.cancel()
      wake.finish()
    }

    var sent: GRPCServingStatus?
    var iterator = wakes.makeAsyncIterator()
    repeat {
      let draining = status.isDraining
      let current = status.status(of: service) ?? .serviceUnknown
      if current != sent {
        guard await responses.send(GRPCHealthMessages.response(current)) else { return .ok }
        sent = current
      }
      if draining { return GRPCFinalStatus(.unavailable, "the server is shutting down") }
    } while await iterator.next() != nil
    // The stream was cancelled (reset by the client, or its connection closed).
    return GRPCFinalStatus(.cancelled)
  }
}
