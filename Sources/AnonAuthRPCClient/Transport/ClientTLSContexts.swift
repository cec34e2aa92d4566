import AnonAuthNet
import Synchronization

/// TLS client contexts shared by every client with the same trust settings: a context is
/// immutable once made, and loading a CA file per connection would waste time and memory
/// when a process holds thousands of connections.
enum ClientTLSContexts {
  private struct Key: Hashable {
    let caFile: String?
    let insecure: Bool
    let applicationProtocol: String
  }

  private static let cache = Mutex<[Key: TLSContext]>([:])

  /// - Parameter applicationProtocol: the one ALPN protocol offered: `anonauth/1` for the
  ///   native client, `h2` for the gRPC one.
  static func context(
    caFile: String?, insecure: Bool, applicationProtocol: String = TLSContext.alpn
  ) throws(RPCClientError) -> TLSContext {
    let key = Key(caFile: caFile, insecure: insecure, applicationProtocol: applicationProtocol)
    if let cached = cache.withLock({ $0[key] }) { return cached }
    let made: TLSContext
    do {
      made = try TLSContext.client(
        caFile: caFile, insecure: insecure, applicationProtocol: applicationProtocol)
    } catch {
      throw .tls(error.description)
    }
    return cache.withLock { cache in
      if let raced = cache[key] { return raced }
      cache[key] = made
      return made
    }
  }
}
