import Synchronization

/// A set of keys with work in flight: `claim` admits one holder per key at a time, so a
/// burst of identical requests costs one unit of work instead of one each.
final class InFlightKeys: Sendable {
  private let keys = Mutex<Set<String>>([])

  /// True when `key` was free and is now held by the caller, who must `release` it.
  func claim(_ key: String) -> Bool {
    keys.withLock { $0.insert(key).inserted }
  }

  func release(_ key: String) {
    _ = keys.withLock { $0.remove(key) }
  }
}
