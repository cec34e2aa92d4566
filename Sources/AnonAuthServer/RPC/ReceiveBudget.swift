import AnonAuthNet
import AnonAuthService
import AnonAuthWire
import Synchronization

/// The budgets for bytes of partly received frames: one for the whole process and one
/// per peer IP, beside the per-IP count of connections. Without them, 256 connections of
/// one address each announcing a 4 MiB frame and sending it slowly held about 1 GiB for
/// the 30 s frame timeout, renewable. Each connection charges what its frame decoder
/// holds through one `Account`, and its calls' payloads, until their handlers return,
/// through another; a connection whose next bytes would go over a budget is
/// told `GoAway` `RESOURCE_EXHAUSTED` and closed, and the others are unaffected.
/// Trusted proxies (`exempt`) count only against the process's budget.
final class ReceiveBudget: Sendable {
  /// Which budget a connection went over.
  enum Refusal: Sendable, Equatable { case process, perIP }

  let maxBytes: Int
  let maxBytesPerIP: Int
  private let peerKey: PeerKey
  private let state = Mutex(State())

  private struct State {
    var total = 0
    var perIP: [String: Int] = [:]
  }

  init(maxBytes: Int, maxBytesPerIP: Int, exempt: [IPNetwork]) {
    self.maxBytes = maxBytes
    self.maxBytesPerIP = maxBytesPerIP
    peerKey = PeerKey(exempt: exempt)
  }

  /// The charge of one connection from `peerIP`.
  func account(for peerIP: String?) -> Account {
    Account(budget: self, key: peerKey.key(peerIP))
  }

  /// Bytes charged now, in all and for one peer (for metrics and tests).
  var totalBytes: Int { state.withLock { $0.total } }
  func bytes(forPeer peerIP: String?) -> Int {
    guard let key = peerKey.key(peerIP) else { return 0 }
    return state.withLock { $0.perIP[key] ?? 0 }
  }

  /// Moves one connection's charge from `old` to `new` bytes, or says which budget the
  /// growth would go over (and changes nothing).
  fileprivate func move(_ key: String?, from old: Int, to new: Int) -> Refusal? {
    let delta = new - old
    return state.withLock { state -> Refusal? in
      if delta > 0 {
        if state.total + delta > maxBytes { return .process }
        if let key, state.perIP[key, default: 0] + delta > maxBytesPerIP { return .perIP }
      }
      state.total = max(0, state.total + delta)
      if let key {
        let now = state.perIP[key, default: 0] + delta
        state.perIP[key] = now > 0 ? now : nil
      }
      return nil
    }
  }

  /// Moves one connection's charge from `old` to `new` bytes whatever the budgets say
  /// (bytes the daemon already holds, such as answers queued for a peer, are charged
  /// even when they go over); whether both budgets are still kept afterwards.
  fileprivate func force(_ key: String?, from old: Int, to new: Int) -> Bool {
    let delta = new - old
    return state.withLock { state -> Bool in
      state.total = max(0, state.total + delta)
      var perIP = 0
      if let key {
        perIP = state.perIP[key, default: 0] + delta
        state.perIP[key] = perIP > 0 ? perIP : nil
      }
      return state.total <= maxBytes && (key == nil || perIP <= maxBytesPerIP)
    }
  }

  /// One connection's charge. Confined to the connection's loop, like the connection.
  final class Account: ReceiveCharge {
    private let budget: ReceiveBudget
    private let key: String?
    /// Bytes charged now, and the most ever charged at once.
    private(set) var charged = 0 {
      didSet { peak = max(peak, charged) }
    }
    private(set) var peak = 0
    /// The budget the last refused growth would have gone over.
    private(set) var refusal: Refusal?

    fileprivate init(budget: ReceiveBudget, key: String?) {
      self.budget = budget
      self.key = key
    }

    func resize(to bytes: Int) -> Bool {
      let bytes = max(0, bytes)
      guard bytes != charged else { return true }
      if let refused = budget.move(key, from: charged, to: bytes) {
        refusal = refused
        return false
      }
      charged = bytes
      return true
    }

    /// Charges `bytes` however much that is, for what is already held (queued output);
    /// whether the process's and the peer's budgets are kept. Over them, the owner stops
    /// taking more work from the peer until the charge goes down.
    func force(to bytes: Int) -> Bool {
      let bytes = max(0, bytes)
      let within = budget.force(key, from: charged, to: bytes)
      charged = bytes
      return within
    }

    /// Gives the whole charge back (the connection closed).
    func release() {
      _ = resize(to: 0)
    }
  }
}
