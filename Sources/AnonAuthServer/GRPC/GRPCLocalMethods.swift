/// The methods the gRPC transport serves itself (`GRPCLocalMethod`), by path: the
/// daemon builds it once (health, reflection) and every HTTP/2 connection's gRPC handler
/// looks a stream's `:path` up here before it falls back to the router.
struct GRPCLocalMethods: Sendable {
  private var byPath: [String: any GRPCLocalMethod] = [:]

  /// Registers `methods`; a later one with the same path replaces an earlier one.
  init(_ methods: [any GRPCLocalMethod] = []) {
    for method in methods { add(method) }
  }

  /// Registers one method (replacing any other at its path).
  mutating func add(_ method: any GRPCLocalMethod) {
    byPath[method.path] = method
  }

  /// The method served at `path`, if one is.
  func method(at path: String) -> (any GRPCLocalMethod)? { byPath[path] }

  /// Every registered path, sorted.
  var paths: [String] { byPath.keys.sorted() }

  var isEmpty: Bool { byPath.isEmpty }
}
