import AnonAuthWire
import Synchronization

/// A concurrency bound per identity provider (per host that outbound requests go to), so
/// that one provider (say, Facebook flooded with junk tokens) can only fill its own
/// share of the outbound threads: `maxConcurrent` requests run, `maxWaiting` more wait,
/// and beyond that a call fails at once with `TOO_MANY_ATTEMPTS_TRY_LATER`
/// (`retry_after_seconds` 1).
public final class ProviderGate: Sendable {
  public static let defaultMaxConcurrent = 4
  public static let defaultMaxWaiting = 32

  private struct Waiter {
    let id: UInt64
    /// Resumed with true when it got a place, false when its call was cancelled.
    let continuation: CheckedContinuation<Bool, Never>
  }

  private struct Slot {
    var running = 0
    var waiters: [Waiter] = []
    /// Calls admitted to wait that have not joined `waiters` yet: they count against
    /// `maxWaiting` too, or a burst admitted at once (before any joined) could wait in
    /// any number.
    var joining = 0
  }

  private struct State {
    var slots: [String: Slot] = [:]
    var nextID: UInt64 = 0
    /// Waiters admitted to wait but not queued yet, and whether their call was cancelled
    /// in between.
    var pending: [UInt64: Bool] = [:]
  }

  let maxConcurrent: Int
  let maxWaiting: Int
  private let state = Mutex(State())
  /// Told of each refusal (for `/metrics`).
  private let onRefusal: @Sendable () -> Void

  init(
    maxConcurrent: Int = ProviderGate.defaultMaxConcurrent, maxWaiting: Int = ProviderGate.defaultMaxWaiting,
    onRefusal: @escaping @Sendable () -> Void = {}
  ) {
    self.maxConcurrent = max(1, maxConcurrent)
    self.maxWaiting = max(0, maxWaiting)
    self.onRefusal = onRefusal
  }

  /// The provider a URL belongs to: its authority (host and port), lower-cased.
  static func key(_ url: String) -> String {
    var rest = Substring(url)
    if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
    return String(rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }).lowercased()
  }

  /// Runs `body` once a place for `key` is free.
  /// - Throws: `TOO_MANY_ATTEMPTS_TRY_LATER` when `maxWaiting` calls already wait.
  func run<T: Sendable>(_ key: String, _ body: () async throws -> T) async throws -> T {
    try await acquire(key)
    defer { release(key) }
    return try await body()
  }

  private enum Admission {
    case running, wait(UInt64), refused
  }

  private func acquire(_ key: String) async throws(RPCError) {
    let admission = state.withLock { state -> Admission in
      var slot = state.slots[key, default: Slot()]
      defer { state.slots[key] = slot }
      if slot.running < maxConcurrent {
        slot.running += 1
        return .running
      }
      guard slot.waiters.count + slot.joining < maxWaiting else { return .refused }
      slot.joining += 1
      state.nextID &+= 1
      state.pending[state.nextID] = false
      return .wait(state.nextID)
    }
    switch admission {
    case .running:
      return
    case .refused:
      onRefusal()
      throw RPCError(
        .tooManyAttempts, "too many sign-ins with this identity provider in progress; try again later",
        details: ["retry_after_seconds": "1"])
    case .wait(let id):
      let got = await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
          let now = state.withLock { state -> Bool? in
            var slot = state.slots[key, default: Slot()]
            defer { state.slots[key] = slot }
            slot.joining = max(0, slot.joining - 1)
            if state.pending.removeValue(forKey: id) == true { return false }
            // A place may have come free since the first look.
            if slot.running < maxConcurrent {
              slot.running += 1
              return true
            }
            slot.waiters.append(Waiter(id: id, continuation: continuation))
            return nil
          }
          if let now { continuation.resume(returning: now) }
        }
      } onCancel: {
        cancelWaiter(id, key: key)
      }
      if !got { throw RPCError(.deadlineExceeded, "the call ended while waiting for the identity provider") }
    }
  }

  /// A waiting call was cancelled: it leaves the queue (or will not join it).
  private func cancelWaiter(_ id: UInt64, key: String) {
    let waiter = state.withLock { state -> Waiter? in
      if var slot = state.slots[key], let index = slot.waiters.firstIndex(where: { $0.id == id }) {
        let waiter = slot.waiters.remove(at: index)
        state.slots[key] = slot
        return waiter
      }
      if state.pending[id] != nil { state.pending[id] = true }
      return nil
    }
    waiter?.continuation.resume(returning: false)
  }

  /// Hands the place to the oldest waiter, or frees it.
  private func release(_ key: String) {
    let next = state.withLock { state -> Waiter? in
      guard var slot = state.slots[key] else { return nil }
      if slot.waiters.isEmpty {
        slot.running -= 1
        state.slots[key] = slot.running > 0 || slot.joining > 0 ? slot : nil
        return nil
      }
      let next = slot.waiters.removeFirst()
      state.slots[key] = slot
      return next
    }
    next?.continuation.resume(returning: true)
  }
}

/// Outbound HTTPS with a per-provider (per-host) concurrency bound in front. The
/// service wraps every environment's outbound client in one; it is public so that a
/// bound can be checked on its own.
public struct GatedOutbound: OutboundHTTP {
  let inner: any OutboundHTTP
  let gate: ProviderGate

  init(inner: any OutboundHTTP, gate: ProviderGate) {
    self.inner = inner
    self.gate = gate
  }

  /// `inner` with at most `maxConcurrent` requests per host under way and `maxWaiting`
  /// waiting; more are refused with `TOO_MANY_ATTEMPTS_TRY_LATER`.
  public init(
    _ inner: any OutboundHTTP, maxConcurrent: Int = ProviderGate.defaultMaxConcurrent,
    maxWaiting: Int = ProviderGate.defaultMaxWaiting
  ) {
    self.init(inner: inner, gate: ProviderGate(maxConcurrent: maxConcurrent, maxWaiting: maxWaiting))
  }

  public func get(_ url: String) async throws -> OutboundResponse {
    try await gate.run(ProviderGate.key(url)) { try await inner.get(url) }
  }

  public func post(_ url: String, form: [(String, String)]) async throws -> OutboundResponse {
    try await gate.run(ProviderGate.key(url)) { try await inner.post(url, form: form) }
  }
}
