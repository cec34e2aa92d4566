import AnonAuthNet
import AnonAuthService
import Synchronization

/// Counts open RPC connections, in all and per peer IP, and paces new ones per peer IP;
/// refuses one over any of the three limits: idle or abandoned connections must not take
/// every file descriptor (and with them the ops port, the store and outbound HTTPS), and
/// a flood of short-lived ones must not take the loop. Shared by the listener, which
/// admits, and every loop, which releases on close.
final class ConnectionLimiter: Sendable {
  /// Why a connection was refused.
  enum Refusal: Sendable { case total, perIP, rate }

  let maxConnections: Int
  let maxPerIP: Int
  /// New connections a second per peer IP after a burst of `maxPerIP`; 0: not paced.
  let ratePerIP: Int
  private let now: @Sendable () -> UInt64
  /// Peers exempt from the per-IP limit and pace: the `--trusted-proxies`, behind which
  /// many clients share one address.
  private let exempt: [IPNetwork]
  private let state: Mutex<State>

  private struct State {
    var total = 0
    var perIP: [String: Int] = [:]
    var rate: ConnectionRate?
  }

  init(
    maxConnections: Int, maxPerIP: Int, ratePerIP: Int = 0, exempt: [IPNetwork],
    now: @escaping @Sendable () -> UInt64 = { MonotonicClock.now() }
  ) {
    self.maxConnections = maxConnections
    self.maxPerIP = maxPerIP
    self.ratePerIP = ratePerIP
    self.exempt = exempt
    self.now = now
    // The burst is the per-IP cap: a client may always open its whole allowance at once.
    state = Mutex(State(rate: ratePerIP > 0 ? ConnectionRate(perSecond: ratePerIP, burst: maxPerIP) : nil))
  }

  /// Peers the pacing remembers now (for tests: the table must not grow without bound).
  var pacedPeers: Int { state.withLock { $0.rate?.trackedPeers ?? 0 } }
  /// Penalized peers the pacing remembers now (for tests: forgotten once paid off).
  var penalizedPeers: Int { state.withLock { $0.rate?.penalizedPeers ?? 0 } }

  /// Counts the connection in, or says which limit it is over (and counts nothing).
  func admit(_ peerIP: String?) -> Refusal? {
    let key = perIPKey(peerIP)
    let time = key == nil || ratePerIP == 0 ? 0 : now()
    return state.withLock { state -> Refusal? in
      if state.total >= maxConnections { return .total }
      if let key {
        let current = state.perIP[key, default: 0]
        if current >= maxPerIP { return .perIP }
        if state.rate?.admit(key, now: time) == false { return .rate }
        state.perIP[key] = current + 1
      }
      state.total += 1
      return nil
    }
  }

  /// Charges `peerIP`'s pace for `connections` more connections (see
  /// `ConnectionRate.penalize`); nothing when it is exempt or the pace is off.
  func penalize(_ peerIP: String?, connections: Int) {
    guard let key = perIPKey(peerIP), ratePerIP > 0 else { return }
    let time = now()
    state.withLock { $0.rate?.penalize(key, connections: connections, now: time) }
  }

  /// Whether `peerIP` was penalized (`penalize`) and has not paid the debt off: its new
  /// connections start deprioritized, handshake included.
  func isPenalized(_ peerIP: String?) -> Bool {
    guard let key = perIPKey(peerIP), ratePerIP > 0 else { return false }
    let time = now()
    return state.withLock { $0.rate?.isPenalized(key, now: time) ?? false }
  }

  /// Counts out a connection `admit` let in.
  func release(_ peerIP: String?) {
    let key = perIPKey(peerIP)
    state.withLock { state in
      state.total = max(0, state.total - 1)
      guard let key, let current = state.perIP[key] else { return }
      state.perIP[key] = current > 1 ? current - 1 : nil
    }
  }

  /// The per-IP counter a peer goes to; nil when it is exempt or has no address.
  private func perIPKey(_ peerIP: String?) -> String? {
    PeerKey(exempt: exempt).key(peerIP)
  }
}
