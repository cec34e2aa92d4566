/// The file descriptors server reflection answers with (`ProtoDescriptors`, embedded at
/// build time by `make proto`), indexed by file name and by every fully-qualified symbol
/// they define: services, methods, messages (nested too), fields, oneofs, enums and enum
/// values (which protobuf scopes beside their enum, not inside it).
struct GRPCDescriptorPool: Sendable {
  struct File: Sendable, Equatable {
    let name: String
    /// The serialized `FileDescriptorProto`, as embedded.
    let bytes: [UInt8]
    /// The files it imports, by name.
    let dependencies: [String]
  }

  /// A symbol's kind, so that reflection can tell a message (the only kind that has
  /// extension numbers) from the rest.
  enum SymbolKind: Sendable, Equatable {
    case service, method, message, field, oneof, enumType, enumValue
  }

  private(set) var files: [String: File] = [:]
  /// Fully-qualified name (no leading dot) to its kind and the file defining it.
  private(set) var symbols: [String: (kind: SymbolKind, file: String)] = [:]
  /// Every service's fully-qualified name, sorted.
  private(set) var services: [String] = []

  /// The embedded descriptors; empty if they do not decode (a unit test decodes them).
  static let embedded: GRPCDescriptorPool =
    (try? GRPCDescriptorPool(encoded: ProtoDescriptors.files)) ?? GRPCDescriptorPool()

  init() {}

  init(encoded: [(name: String, base64: String)]) throws(GRPCProtoMalformed) {
    for entry in encoded {
      guard let bytes = GRPCBase64.decode(entry.base64) else { throw GRPCProtoMalformed() }
      try add(bytes)
    }
    services.sort()
  }

  /// The file and, after it, each file it imports directly or not that is not in `sent`
  /// (breadth first), as grpc-go answers: a client keeps the files a stream already gave
  /// it. Every name returned is added to `sent`. Nil for an unknown file.
  func fileWithDependencies(_ name: String, sent: inout Set<String>) -> [[UInt8]]? {
    guard let file = files[name] else { return nil }
    var answer = [file.bytes]
    sent.insert(name)
    var queue = file.dependencies[...]
    while let next = queue.popFirst() {
      guard !sent.contains(next), let dependency = files[next] else { continue }
      sent.insert(next)
      answer.append(dependency.bytes)
      queue.append(contentsOf: dependency.dependencies)
    }
    return answer
  }

  // MARK: Indexing one FileDescriptorProto

  private mutating func add(_ bytes: [UInt8]) throws(GRPCProtoMalformed) {
    var reader = GRPCProtoReader(bytes)
    var name = ""
    var package = ""
    var dependencies: [String] = []
    var bodies: [(UInt64, ArraySlice<UInt8>)] = []
    while let (number, value) = try reader.next() {
      switch number {
      case 1: name = try Self.text(value)
      case 2: package = try Self.text(value)
      case 3: dependencies.append(try Self.text(value))
      case 4, 5, 6, 7: bodies.append((number, try Self.body(value)))
      default: continue
      }
    }
    guard !name.isEmpty else { throw GRPCProtoMalformed() }
    files[name] = File(name: name, bytes: bytes, dependencies: dependencies)
    let scope = package
    for (number, body) in bodies {
      switch number {
      case 4: try addMessage(body, scope: scope, file: name)
      case 5: try addEnum(body, scope: scope, file: name)
      case 6: try addService(body, scope: scope, file: name)
      default: try addNamed(body, .field, scope: scope, file: name)  // a file-level extension
      }
    }
  }

  private mutating func addMessage(_ body: ArraySlice<UInt8>, scope: String, file: String)
    throws(GRPCProtoMalformed)
  {
    let (name, parts) = try Self.nameAndParts(body)
    let full = Self.join(scope, name)
    symbols[full] = (.message, file)
    for (number, part) in parts {
      switch number {
      case 2, 6: try addNamed(part, .field, scope: full, file: file)  // fields, extensions
      case 3: try addMessage(part, scope: full, file: file)
      case 4: try addEnum(part, scope: full, file: file)
      case 8: try addNamed(part, .oneof, scope: full, file: file)
      default: continue
      }
    }
  }

  private mutating func addEnum(_ body: ArraySlice<UInt8>, scope: String, file: String)
    throws(GRPCProtoMalformed)
  {
    let (name, parts) = try Self.nameAndParts(body)
    symbols[Self.join(scope, name)] = (.enumType, file)
    for (number, part) in parts where number == 2 {
      try addNamed(part, .enumValue, scope: scope, file: file)
    }
  }

  private mutating func addService(_ body: ArraySlice<UInt8>, scope: String, file: String)
    throws(GRPCProtoMalformed)
  {
    let (name, parts) = try Self.nameAndParts(body)
    let full = Self.join(scope, name)
    symbols[full] = (.service, file)
    services.append(full)
    for (number, part) in parts where number == 2 {
      try addNamed(part, .method, scope: full, file: file)
    }
  }

  private mutating func addNamed(
    _ body: ArraySlice<UInt8>, _ kind: SymbolKind, scope: String, file: String
  ) throws(GRPCProtoMalformed) {
    let (name, _) = try Self.nameAndParts(body)
    symbols[Self.join(scope, name)] = (kind, file)
  }

  /// A descriptor's `name` (field 1, in every descriptor kind) and its message-typed
  /// fields, by number.
  private static func nameAndParts(_ body: ArraySlice<UInt8>) throws(GRPCProtoMalformed)
    -> (String, [(UInt64, ArraySlice<UInt8>)])
  {
    var reader = GRPCProtoReader(body)
    var name = ""
    var parts: [(UInt64, ArraySlice<UInt8>)] = []
    while let (number, value) = try reader.next() {
      if number == 1 {
        name = try text(value)
      } else if case .bytes(let part) = value {
        parts.append((number, part))
      }
    }
    guard !name.isEmpty else { throw GRPCProtoMalformed() }
    return (name, parts)
  }

  private static func text(_ value: GRPCProtoReader.Value) throws(GRPCProtoMalformed) -> String {
    guard let text = value.string else { throw GRPCProtoMalformed() }
    return text
  }

  private static func body(_ value: GRPCProtoReader.Value) throws(GRPCProtoMalformed) -> ArraySlice<UInt8> {
    guard let body = value.slice else { throw GRPCProtoMalformed() }
    return body
  }

  private static func join(_ scope: String, _ name: String) -> String {
    scope.isEmpty ? name : scope + "." + name
  }
}
