import AnonAuthWire

/// gRPC server reflection (`grpc.reflection.v1` and `v1alpha`, the same messages under two
/// package names): a bidirectional stream on which each request gets one response, in
/// order, built from the file descriptors embedded at build time (`GRPCDescriptorPool`).
/// What it tells is the API's shape, the same as the .proto files the repository
/// publishes: no key, no account, no configuration.
struct GRPCReflection: GRPCLocalMethod {
  /// "grpc.reflection.v1" or "grpc.reflection.v1alpha".
  let package: String
  let pool: GRPCDescriptorPool
  /// The services `list_services` names: the ones the gRPC transport serves.
  let services: [String]
  let hasDefaultDeadline = false

  var path: String { "/\(package).ServerReflection/ServerReflectionInfo" }

  init(package: String, pool: GRPCDescriptorPool = .embedded, services: [String]) {
    self.package = package
    self.pool = pool
    self.services = services.sorted()
  }

  func run(requests: AsyncStream<[UInt8]>, responses: GRPCResponseWriter) async -> GRPCFinalStatus {
    var sent: Set<String> = []
    for await request in requests {
      guard let response = answer(request, sent: &sent) else { return GRPCUnaryRequest.undecodable }
      guard await responses.send(response) else { return GRPCFinalStatus(.cancelled) }
    }
    return .ok
  }

  /// The response to one request; nil when its bytes are not a `ServerReflectionRequest`
  /// (the call then ends, as grpc-go's does on a message it cannot unmarshal). `sent`:
  /// the files this stream has given already, whose repeats are left out as imports.
  func answer(_ request: [UInt8], sent: inout Set<String>) -> [UInt8]? {
    guard let parsed = GRPCReflectionRequest(request) else { return nil }
    var writer = GRPCProtoWriter()
    if !parsed.host.isEmpty { writer.string(1, parsed.host) }
    writer.bytes(2, request)
    switch parsed.kind {
    case .fileByFilename(let name):
      files(pool.fileWithDependencies(name, sent: &sent), missing: "file \(name)", into: &writer)
    case .fileContainingSymbol(let symbol):
      let file = pool.symbols[symbol].map(\.file)
      files(
        file.flatMap { pool.fileWithDependencies($0, sent: &sent) }, missing: "symbol \(symbol)",
        into: &writer)
    case .fileContainingExtension(let type, let number):
      // No file here declares an extension.
      error(.notFound, "extension \(number) of \(type) not found", into: &writer)
    case .allExtensionNumbersOfType(let type):
      if pool.symbols[type]?.kind == .message {
        // A known message with no extensions: an empty list, as grpc-go answers.
        var numbers = GRPCProtoWriter()
        numbers.string(1, type)
        writer.bytes(5, numbers.bytes)
      } else {
        error(.notFound, "type \(type) not found", into: &writer)
      }
    case .listServices:
      var list = GRPCProtoWriter()
      for service in services {
        var entry = GRPCProtoWriter()
        entry.string(1, service)
        list.bytes(1, entry.bytes)
      }
      writer.bytes(6, list.bytes)
    case .none:
      error(.invalidArgument, "the request names no question (message_request is unset)", into: &writer)
    }
    return writer.bytes
  }

  private func files(_ found: [[UInt8]]?, missing: String, into writer: inout GRPCProtoWriter) {
    guard let found else {
      error(.notFound, "\(missing) not found", into: &writer)
      return
    }
    var response = GRPCProtoWriter()
    for file in found { response.bytes(1, file) }
    writer.bytes(4, response.bytes)
  }

  private func error(_ code: StatusCode, _ message: String, into writer: inout GRPCProtoWriter) {
    var response = GRPCProtoWriter()
    response.int32(1, code.rawValue)
    response.string(2, message)
    writer.bytes(7, response.bytes)
  }
}

/// A `ServerReflectionRequest`, decoded: its host and the one question it asks (the
/// last one on the wire wins, as protobuf's oneof rule says).
struct GRPCReflectionRequest: Equatable {
  enum Kind: Equatable {
    case none
    case fileByFilename(String)
    case fileContainingSymbol(String)
    case fileContainingExtension(type: String, number: Int32)
    case allExtensionNumbersOfType(String)
    case listServices
  }

  var host = ""
  var kind = Kind.none

  init?(_ bytes: [UInt8]) {
    var reader = GRPCProtoReader(bytes)
    do {
      while let (number, value) = try reader.next() {
        guard [1, 3, 4, 5, 6, 7].contains(number) else { continue }
        if number == 5 {
          guard let body = value.slice, let (type, extensionNumber) = try Self.extensionRequest(body) else {
            return nil
          }
          kind = .fileContainingExtension(type: type, number: extensionNumber)
          continue
        }
        guard let text = value.string else { return nil }
        switch number {
        case 1: host = text
        case 3: kind = .fileByFilename(text)
        case 4: kind = .fileContainingSymbol(text.hasPrefix(".") ? String(text.dropFirst()) : text)
        case 6: kind = .allExtensionNumbersOfType(text.hasPrefix(".") ? String(text.dropFirst()) : text)
        default: kind = .listServices
        }
      }
    } catch {
      return nil
    }
  }

  /// `ExtensionRequest`: containing_type (1) and extension_number (2, an int32).
  private static func extensionRequest(_ body: ArraySlice<UInt8>) throws(GRPCProtoMalformed)
    -> (String, Int32)?
  {
    var reader = GRPCProtoReader(body)
    var type = ""
    var number: Int32 = 0
    while let (field, value) = try reader.next() {
      switch field {
      case 1:
        guard let text = value.string else { return nil }
        type = text
      case 2:
        guard let raw = value.integer else { return nil }
        number = Int32(truncatingIfNeeded: raw)
      default: continue
      }
    }
    return (type, number)
  }
}
