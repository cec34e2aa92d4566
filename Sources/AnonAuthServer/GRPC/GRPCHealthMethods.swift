/// `grpc.health.v1.Health/Check`: the status now; NOT_FOUND for a service the server
/// does not serve (the health protocol's answer for Check).
struct GRPCHealthCheck: GRPCLocalMethod {
  let status: GRPCHealthStatus
  let path = "/grpc.health.v1.Health/Check"
  let hasDefaultDeadline = true

  func run(requests: AsyncStream<[UInt8]>, responses: GRPCResponseWriter) async -> GRPCFinalStatus {
    guard let request = await GRPCUnaryRequest.first(of: requests) else { return GRPCUnaryRequest.missing }
    guard let service = GRPCHealthMessages.service(in: request) else { return GRPCUnaryRequest.undecodable }
    guard let current = status.status(of: service) else {
      return GRPCFinalStatus(.notFound, "unknown service")
    }
    _ = await responses.send(GRPCHealthMessages.response(current))
    return .ok
  }
}

/// `grpc.health.v1.Health/List`: every service's status at once ("" included).
struct GRPCHealthList: GRPCLocalMethod {
  let status: GRPCHealthStatus
  let path = "/grpc.health.v1.Health/List"
  let hasDefaultDeadline = true

  func run(requests: AsyncStream<[UInt8]>, responses: GRPCResponseWriter) async -> GRPCFinalStatus {
    guard let request = await GRPCUnaryRequest.first(of: requests) else { return GRPCUnaryRequest.missing }
    var reader = GRPCProtoReader(request)
    do {
      while try reader.next() != nil {}
    } catch {
      return GRPCUnaryRequest.undecodable
    }
    let statuses = status.services.compactMap { name in status.status(of: name).map { (name, $0) } }
    _ = await responses.send(GRPCHealthMessages.list(statuses))
    return .ok
  }
}
