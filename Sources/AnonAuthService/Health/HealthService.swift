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
    response.status = state.isServing && storeHealthy() ? "SERVING" : "NOT_SERVING"
    return response
  }
}
