import AnonAuthNet
import Synchronization

/// TLS client contexts shared by every client with the same trust settings: a context is
/// immutable once made, and loading a CA file per connection would waste time and memory
/// when a process holds thousands of connections.
enum ClientTLSContexts {
  private struct Key: Hashable {
    let caFile: String?
    let insecure: Bool
  }

  private static let cache = Mutex<[Key: TLSContext]>([:])

  static func context(caFile: String?, insecure: Bool) throws(RPCClientError) -> TLSContext {
    let key = Key(caFile: caFile, insecure: insecure)
    if let cached = cache.withLock({ $0[key] }) { return cached }
    let made: TLSContext
    do {
      made = try TLSContext.client(caFile: caFile, insecure: insecure)
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
