import AnonAuthService

/// The standard gRPC services the daemon serves itself: health (following the readiness
/// of `anonauth.v1.HealthService`) and server reflection in both its versions, over the
/// file descriptors embedded at build time.
enum GRPCStandardServices {
  /// Every method of `grpc.health.v1.Health`, `grpc.reflection.v1.ServerReflection` and
  /// `grpc.reflection.v1alpha.ServerReflection`. Health and reflection report on every
  /// service in the embedded descriptors: Protos/ (which the router serves) and these.
  static func methods(health: HealthService, pool: GRPCDescriptorPool = .embedded) -> [any GRPCLocalMethod] {
    let status = GRPCHealthStatus(health: health, services: pool.services)
    return [
      GRPCHealthCheck(status: status),
      GRPCHealthWatch(status: status),
      GRPCHealthList(status: status),
      GRPCReflection(package: "grpc.reflection.v1", pool: pool, services: pool.services),
      GRPCReflection(package: "grpc.reflection.v1alpha", pool: pool, services: pool.services),
    ]
  }
}
