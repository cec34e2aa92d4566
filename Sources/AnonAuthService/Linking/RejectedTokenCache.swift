import AnonAuthCrypto
import AnonAuthWire
import Synchronization

/// Provider tokens the provider itself refused, remembered briefly (by SHA-256, never
/// the token), so that a junk token sent again is answered without another outbound
/// call. Only answers are cached: a provider that could not be reached, or a call
/// refused by the provider's concurrency bound, is not.
final class RejectedTokenCache: Sendable {
  static let defaultLifetimeMs: Int64 = 60_000
  static let defaultMaxEntries = 10_000

  private struct Entry {
    let error: RPCError
    let untilMs: Int64
  }

  let lifetimeMs: Int64
  let maxEntries: Int
  private let entries = Mutex<[[UInt8]: Entry]>([:])

  init(
    lifetimeMs: Int64 = RejectedTokenCache.defaultLifetimeMs,
    maxEntries: Int = RejectedTokenCache.defaultMaxEntries
  ) {
    self.lifetimeMs = lifetimeMs
    self.maxEntries = max(1, maxEntries)
  }

  static func key(_ parts: [String]) -> [UInt8] { SHA256.hash(Array(parts.joined(separator: "\u{0}").utf8)) }

  var count: Int { entries.withLock { $0.count } }

  /// The refusal remembered for `key`, if still fresh.
  func refusal(_ key: [UInt8], nowMs: Int64) -> RPCError? {
    entries.withLock { entries in
      guard let entry = entries[key] else { return nil }
      if entry.untilMs <= nowMs {
        entries[key] = nil
        return nil
      }
      return entry.error
    }
  }

  func remember(_ key: [UInt8], _ error: RPCError, nowMs: Int64) {
    entries.withLock { entries in
      if entries.count >= maxEntries {
        entries = entries.filter { $0.value.untilMs > nowMs }
        if entries.count >= maxEntries {
          // Drop the entries closest to expiry: the oldest.
          let oldest = entries.sorted { $0.value.untilMs < $1.value.untilMs }
          for (dropped, _) in oldest.prefix(entries.count - maxEntries * 9 / 10) { entries[dropped] = nil }
        }
      }
      entries[key] = Entry(error: error, untilMs: nowMs + lifetimeMs)
    }
  }
}
