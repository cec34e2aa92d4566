import AnonAuthWire

/// `HealthService/Check`: SERVING while the process takes work, NOT_SERVING while it
/// starts or drains, so a load balancer stops sending before connections close.
public struct HealthService: HealthServiceHandler {
  public static let name = HealthServiceMethods.serviceName
  private let state: ServingState
  private let storeHealthy: @Sendable () -> Bool

  public init(state: ServingState, storeHealthy: @escaping @Sendable () -> Bool = { true }) {
    self.state = state
    self.storeHealthy = storeHealthy
  }

  public func check(_ request: CheckRequest, context: CallContext) -> CheckResponse {
    var response = CheckResponse()
    response.status = isServing ? "SERVING" : "NOT_SERVING"
    return response
  }

  /// The readiness every health answer reports: this service's `Check`, and gRPC's
  /// `grpc.health.v1.Health`, which must never disagree with it.
  public var isServing: Bool { state.isServing && storeHealthy() }

  /// The process's phase, for watchers that want to hear of its changes.
  public var servingState: ServingState { state }
}
