import AnonAuthService
import Synchronization
import Testing

@testable import AnonAuthServer

/// `grpc.health.v1.Health` follows the readiness of `anonauth.v1.HealthService`: the
/// process's phase and the store's health.
@Suite struct GRPCHealthTests {
  /// A health source whose store health the test sets.
  final class Readiness: Sendable {
    let state = ServingState()
    let storeHealthy = Atomic<Bool>(true)
    var health: HealthService {
      HealthService(state: state) { self.storeHealthy.load(ordering: .relaxed) }
    }
    var status: GRPCHealthStatus {
      GRPCHealthStatus(health: health, services: ["anonauth.v1.AccountService"])
    }
  }

  static func request(_ service: String) -> [UInt8] {
    var writer = GRPCProtoWriter()
    if !service.isEmpty { writer.string(1, service) }
    return writer.bytes
  }

  static func decoded(_ response: [UInt8]?) -> GRPCServingStatus? {
    guard let response else { return nil }
    var reader = GRPCProtoReader(response)
    var status = GRPCServingStatus.unknown
    while let (number, value) = try? reader.next() {
      if number == 1, let raw = value.integer { status = GRPCServingStatus(rawValue: raw) ?? .unknown }
    }
    return status
  }

  static func check(_ readiness: Readiness, _ service: String) async -> (GRPCServingStatus?, GRPCFinalStatus?)
  {
    let (responses, final) = await GRPCLocalMethodHarness.unary(
      GRPCHealthCheck(status: readiness.status), request(service))
    return (responses.count == 1 ? decoded(responses.first) : nil, final)
  }

  @Test func checkFollowsThePhaseAndTheStore() async {
    let readiness = Readiness()
    #expect(await Self.check(readiness, "") == (.notServing, .ok))  // starting
    readiness.state.set(.serving)
    #expect(await Self.check(readiness, "") == (.serving, .ok))
    #expect(await Self.check(readiness, "anonauth.v1.AccountService") == (.serving, .ok))
    readiness.storeHealthy.store(false, ordering: .relaxed)
    #expect(await Self.check(readiness, "") == (.notServing, .ok))
    #expect(readiness.health.isServing == false)
    readiness.storeHealthy.store(true, ordering: .relaxed)
    readiness.state.set(.draining)
    #expect(await Self.check(readiness, "anonauth.v1.AccountService") == (.notServing, .ok))
  }

  @Test func checkOfAnUnknownServiceIsNotFound() async {
    let readiness = Readiness()
    readiness.state.set(.serving)
    let (status, final) = await Self.check(readiness, "anonauth.v1.NoSuchService")
    #expect(status == nil)
    #expect(final?.code == .notFound)
  }

  @Test func checkRefusesBadInput() async {
    let readiness = Readiness()
    let method = GRPCHealthCheck(status: readiness.status)
    // Field 1 as a varint, not a string.
    let (responses, final) = await GRPCLocalMethodHarness.unary(method, [0x08, 0x01])
    #expect(responses.isEmpty)
    #expect(final?.code == .internalError)
    // No request message at all.
    let harness = GRPCLocalMethodHarness()
    harness.start(method)
    harness.halfClose()
    #expect(await harness.next() == nil)
    #expect(await harness.finalStatus()?.code == .internalError)
  }

  @Test func listReportsEveryService() async {
    let readiness = Readiness()
    readiness.state.set(.serving)
    let (responses, final) = await GRPCLocalMethodHarness.unary(GRPCHealthList(status: readiness.status), [])
    #expect(final == .ok)
    #expect(
      responses == [
        GRPCHealthMessages.list([("", .serving), ("anonauth.v1.AccountService", .serving)])
      ])
  }

  @Test func watchSendsEachChangeAndEndsAtDrain() async {
    let readiness = Readiness()
    let harness = GRPCLocalMethodHarness()
    harness.start(GRPCHealthWatch(status: readiness.status, storePollInterval: .milliseconds(5)))
    harness.send(Self.request(""))
    #expect(Self.decoded(await harness.next()) == .notServing)  // starting
    readiness.state.set(.serving)
    #expect(Self.decoded(await harness.next()) == .serving)
    // The store's health has no notification: the watcher polls it.
    readiness.storeHealthy.store(false, ordering: .relaxed)
    #expect(Self.decoded(await harness.next()) == .notServing)
    readiness.storeHealthy.store(true, ordering: .relaxed)
    #expect(Self.decoded(await harness.next()) == .serving)
    readiness.state.set(.draining)
    #expect(Self.decoded(await harness.next()) == .notServing)
    #expect(await harness.next() == nil)
    #expect(await harness.finalStatus()?.code == .unavailable)
  }

  @Test func watchOfAnUnknownServiceKeepsWatching() async {
    let readiness = Readiness()
    readiness.state.set(.serving)
    let harness = GRPCLocalMethodHarness()
    harness.start(GRPCHealthWatch(status: readiness.status, storePollInterval: .milliseconds(5)))
    harness.send(Self.request("anonauth.v1.NoSuchService"))
    #expect(Self.decoded(await harness.next()) == .serviceUnknown)
    // Still open: a client cancel ends it.
    harness.cancel()
    #expect(await harness.next() == nil)
    #expect(await harness.finalStatus()?.code == .cancelled)
  }
}
