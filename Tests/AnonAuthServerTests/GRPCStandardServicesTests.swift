import AnonAuthService
import Testing

@testable import AnonAuthServer

/// Every rpc that Protos-standard/ describes (and so reflection announces) is served, and
/// nothing else is: a method added to the .proto without its implementation fails here.
@Suite struct GRPCStandardServicesTests {
  @Test func everyDescribedStandardMethodIsServed() throws {
    let methods = GRPCStandardServices.methods(health: HealthService(state: ServingState()))
    let served = GRPCLocalMethods(methods).paths
    let declared = try GRPCDescriptorPoolTests.declared(in: "Protos-standard")
    let described = declared.flatMap { service, rpcs in rpcs.map { "/\(service)/\($0)" } }.sorted()
    #expect(served == described)
    // Streams that live as long as the client wants have no default deadline.
    let unbounded = methods.filter { !$0.hasDefaultDeadline }.map(\.path).sorted()
    #expect(
      unbounded == [
        "/grpc.health.v1.Health/Watch", "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      ])
  }
}
