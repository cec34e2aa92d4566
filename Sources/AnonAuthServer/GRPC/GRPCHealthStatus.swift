import AnonAuthService

/// `grpc.health.v1.HealthCheckResponse.ServingStatus`.
enum GRPCServingStatus: UInt64, Sendable {
  case unknown = 0
  case serving = 1
  case notServing = 2
  /// Only `Watch` sends it, for a name the server does not serve.
  case serviceUnknown = 3
}

/// What `grpc.health.v1.Health` reports: the readiness of `anonauth.v1.HealthService`
/// (the process is serving, not starting or draining, and the store takes writes), the
/// same for the whole server ("") and for each service it serves. One answer for all:
/// every service runs on the same process and store, so none can be up while another is
/// down.
struct GRPCHealthStatus: Sendable {
  let health: HealthService
  /// "" and the fully-qualified name of every service the gRPC transport serves.
  let services: Set<String>

  /// `services`: the served services; "" is added.
  init(health: HealthService, services: some Sequence<String>) {
    self.health = health
    self.services = Set(services).union([""])
  }

  /// The status of `service`, or nil when the server does not serve it.
  func status(of service: String) -> GRPCServingStatus? {
    guard services.contains(service) else { return nil }
    return health.isServing ? .serving : .notServing
  }

  var isDraining: Bool { health.servingState.current == .draining }
}

/// The health messages, hand-encoded (they are not in Protos/: `Protos-standard/`).
enum GRPCHealthMessages {
  /// `HealthCheckRequest.service`; nil when the bytes are not that message.
  static func service(in request: [UInt8]) -> String? {
    var reader = GRPCProtoReader(request)
    var service = ""
    do {
      while let (number, value) = try reader.next() {
        guard number == 1 else { continue }
        guard let text = value.string else { return nil }
        service = text
      }
    } catch {
      return nil
    }
    return service
  }

  /// A `HealthCheckResponse`.
  static func response(_ status: GRPCServingStatus) -> [UInt8] {
    var writer = GRPCProtoWriter()
    if status != .unknown { writer.varint(1, status.rawValue) }
    return writer.bytes
  }

  /// A `HealthListResponse`: its map, one entry per service, sorted by name.
  static func list(_ statuses: [(String, GRPCServingStatus)]) -> [UInt8] {
    var writer = GRPCProtoWriter()
    for (service, status) in statuses.sorted(by: { $0.0 < $1.0 }) {
      var entry = GRPCProtoWriter()
      entry.string(1, service)
      entry.bytes(2, response(status))
      writer.bytes(1, entry.bytes)
    }
    return writer.bytes
  }
}
