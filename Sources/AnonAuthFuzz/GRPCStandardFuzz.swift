@_spi(Fuzzing) import AnonAuthServer

/// The standard gRPC services' request decoders (reflection's `ServerReflectionRequest`,
/// health's `HealthCheckRequest`): reached with no credential.
enum GRPCStandardFuzz {
  static func run(_ data: [UInt8]) {
    GRPCStandardFuzzing.run(data)
  }
}
