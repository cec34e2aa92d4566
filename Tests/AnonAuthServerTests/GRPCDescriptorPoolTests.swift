import Foundation
import Testing

@testable import AnonAuthServer

/// The embedded descriptors decode and describe every service and method of Protos/ and
/// of the standard services, so that reflection clients need no .proto file.
@Suite struct GRPCDescriptorPoolTests {
  /// Every `package`, `service` and `rpc` of the .proto files under `folder`, read from
  /// the source tree (not from the generated code the descriptors came with).
  static func declared(in folder: String) throws -> [String: [String]] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(folder)
    var services: [String: [String]] = [:]
    let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
    for file in files where file.hasSuffix(".proto") {
      let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
      var package = ""
      var service = ""
      for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
        let words = line.split(whereSeparator: { " ({;".contains($0) }).map(String.init)
        guard words.count >= 2 else { continue }
        switch words[0] {
        case "package": package = words[1]
        case "service":
          service = package + "." + words[1]
          services[service, default: []].append(contentsOf: [])
        case "rpc": services[service, default: []].append(words[1])
        default: continue
        }
      }
    }
    return services
  }

  @Test func everyEmbeddedFileDecodes() throws {
    let pool = try GRPCDescriptorPool(encoded: ProtoDescriptors.files)
    #expect(pool.files.count == ProtoDescriptors.files.count)
    #expect(GRPCDescriptorPool.embedded.files.count == ProtoDescriptors.files.count)
    #expect(pool.files["anonauth/v1/admin.proto"]?.dependencies == ["anonauth/v1/account.proto"])
  }

  @Test func everyServiceAndMethodOfTheProtosIsDescribed() throws {
    let pool = GRPCDescriptorPool.embedded
    let declared = try Self.declared(in: "Protos").merging(Self.declared(in: "Protos-standard")) { $0 + $1 }
    #expect(declared["anonauth.v1.AccountService"]?.contains("SignUp") == true)
    #expect(declared["grpc.health.v1.Health"]?.contains("Watch") == true)
    #expect(Set(pool.services) == Set(declared.keys))
    for (service, methods) in declared {
      #expect(pool.symbols[service]?.kind == .service, "\(service)")
      for method in methods {
        #expect(pool.symbols[service + "." + method]?.kind == .method, "\(service).\(method)")
      }
    }
  }

  @Test func symbolsOfEveryKindAreIndexed() {
    let symbols = GRPCDescriptorPool.embedded.symbols
    #expect(symbols["anonauth.v1.SignUpRequest"]?.file == "anonauth/v1/account.proto")
    #expect(symbols["anonauth.v1.SignUpRequest"]?.kind == .message)
    #expect(symbols["grpc.health.v1.HealthCheckResponse.ServingStatus"]?.kind == .enumType)
    // Enum values live beside their enum, as protobuf scopes them.
    #expect(symbols["grpc.health.v1.HealthCheckResponse.SERVING"]?.kind == .enumValue)
    #expect(symbols["grpc.health.v1.HealthCheckRequest.service"]?.kind == .field)
    #expect(symbols["grpc.reflection.v1.ServerReflectionRequest.message_request"]?.kind == .oneof)
    #expect(symbols["grpc.health.v1.HealthListResponse.StatusesEntry"]?.kind == .message)
  }

  @Test func aFileComesWithItsImportsOnceAStream() {
    let pool = GRPCDescriptorPool.embedded
    var sent: Set<String> = []
    let first = pool.fileWithDependencies("anonauth/v1/admin.proto", sent: &sent)
    #expect(first?.count == 2)
    #expect(first?.first == pool.files["anonauth/v1/admin.proto"]?.bytes)
    // Asked again on the same stream: the file itself, but not its import again.
    #expect(pool.fileWithDependencies("anonauth/v1/admin.proto", sent: &sent)?.count == 1)
    #expect(pool.fileWithDependencies("nope.proto", sent: &sent) == nil)
  }

  @Test func malformedDescriptorsAreRefusedNotTrapped() {
    #expect(GRPCBase64.decode("not base64!") == nil)
    #expect(GRPCBase64.decode("QUJD") == Array("ABC".utf8))
    #expect(GRPCBase64.decode("QUI=\n") == Array("AB".utf8))
    #expect(throws: GRPCProtoMalformed.self) { try GRPCDescriptorPool(encoded: [("x", "CgV4")]) }
    #expect(throws: GRPCProtoMalformed.self) { try GRPCDescriptorPool(encoded: [("x", "/w==")]) }
  }
}
