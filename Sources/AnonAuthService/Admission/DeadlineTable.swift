/// Keys with one deadline each (for `RateTable` and the server's `ConnectionRate`: when
/// the key's bucket is full again, in the caller's clock's units), bounded at `maxKeys`,
/// where making room for a new key, and forgetting keys whose deadline has passed, cost
/// the same however many keys are held: no sort and no walk of the table, under a lock
/// every admission takes.
///
/// Keys are kept in lists by deadline, one list per slot of `quantum` units on a
/// ring of `slotCount` slots that spans more than the furthest a deadline may lie ahead
/// of now (`horizon`), and one list of keys whose deadline has passed (their bucket is
/// full again: dropping them forgives nothing). When the table is full, a new key takes
/// the place of a key whose deadline has passed, or else of the first key of the
/// earliest slot: one whose deadline is within one `quantum` (at most 1/63 of the
/// horizon) of the least owed. Keys whose deadline has passed are also dropped two per
/// `set`, so the table shrinks back to the keys still owed.
///
/// Each key's entry is a node of a doubly linked list in one array (indices, no
/// references), so moving a key between slots, dropping it and taking the first of a
/// slot are O(1); finding the earliest slot walks at most `slotCount` list heads.
///
/// A table made with `reportsDrops` lists the keys it drops on its own (`takeDropped`),
/// for a caller that keeps data per key beside it (`SignInThrottle`).
package struct DeadlineTable {
  private struct Node {
    var key: String
    var deadline: Int64
    /// The slot number (deadline >> shift, or `base` if that was behind) the node was
    /// linked under: in the ring list `slot & mask` while it is `base` or more, in the
    /// stale list once the ring has moved past it; `unused` for free nodes and heads.
    var slot: Int64
    var prev: Int32
    var next: Int32
  }

  /// Ring slots; a power of two.
  static let slotCount = 128
  private static let mask = Int64(slotCount - 1)
  /// The list of keys whose deadline has passed; its head is node `stale`.
  private static let stale = Int32(slotCount)
  private static let unused = Int64.min

  package let maxKeys: Int
  /// log2 of a slot's length in the clock's units.
  private let shift: Int64
  /// Nodes 0 ..< slotCount are the ring slots' list heads and node `stale` the stale
  /// list's (circular lists: a head links to itself when its list is empty); the rest
  /// hold keys or are free.
  private var nodes: [Node]
  private var index: [String: Int32] = [:]
  /// First free node (linked through `next`), or -1.
  private var freeNode: Int32 = -1
  /// The slot number (deadline >> shift) ring position `base & mask` stands for: ring
  /// lists hold keys with slot numbers base ..< base + slotCount.
  private var base: Int64 = .min
  /// No ring list below this slot number holds a key (where the search for the earliest
  /// starts).
  private var low: Int64 = .min
  /// The node the last lookup found, so that `RateTable.take` after `wait` for the same
  /// key does not hash it again.
  private var lastFound: Int32 = -1
  /// The key the last lookup did not find, for the same reason (a new key's `take`).
  private var lastMissing: String?
  private let reportsDrops: Bool
  /// The keys dropped on the table's own since the last `takeDropped` (only with
  /// `reportsDrops`).
  private var dropped: [String] = []

  /// How many keys are held.
  package var count: Int { index.count }

  /// The length of one slot in the clock's units (for tests).
  package var quantum: Int64 { 1 << shift }

  /// - Parameters:
  ///   - horizon: the furthest ahead of now a deadline set may lie.
  ///   - maxKeys: the most keys held (at least 1).
  ///   - reportsDrops: list the keys dropped to make room or because their deadline
  ///     passed, for `takeDropped`.
  package init(horizon: Int64, maxKeys: Int, reportsDrops: Bool = false) {
    self.maxKeys = max(1, maxKeys)
    self.reportsDrops = reportsDrops
    // The ring must hold every slot from now's to now + horizon's, plus one.
    var shift: Int64 = 0
    while (max(1, horizon) >> shift) + 2 > Int64(Self.slotCount) { shift += 1 }
    self.shift = shift
    nodes = (0...Self.slotCount).map { head in
      Node(key: "", deadline: 0, slot: Self.unused, prev: Int32(head), next: Int32(head))
    }
  }

  /// The key's deadline, or nil when it has no entry.
  package mutating func deadline(_ key: String) -> Int64? {
    guard let node = find(key) else { return nil }
    return nodes[Int(node)].deadline
  }

  /// Sets the key's deadline (`now < deadline <= now + horizon`), making room when
  /// a new key finds the table full.
  package mutating func set(_ key: String, deadline: Int64, now: Int64) {
    advance(now: now)
    dropPassed(now: now, atMost: 2)
    if let node = find(key) {
      nodes[Int(node)].deadline = deadline
      let slot = ringSlot(deadline)
      if nodes[Int(node)].slot != slot {
        unlink(node)
        link(node, slot: slot)
      }
      return
    }
    if index.count >= maxKeys { evictOne() }
    let node = allocate(key, deadline: deadline)
    index[key] = node
    lastMissing = nil
    link(node, slot: ringSlot(deadline))
    lastFound = node
  }

  /// Forgets up to `atMost` keys whose deadline has passed, as `set` does: a table set
  /// rarely (penalties) shrinks with the calls that read it.
  package mutating func forgetPassed(now: Int64, atMost: Int = 2) {
    advance(now: now)
    dropPassed(now: now, atMost: atMost)
  }

  /// Drops the key's entry (not reported by `takeDropped`).
  package mutating func remove(_ key: String) {
    guard let node = find(key) else { return }
    drop(node)
  }

  /// The keys the table dropped on its own (to make room, or because their deadline
  /// passed) since the last call, oldest first; always empty without `reportsDrops`. A
  /// key dropped and then set again is listed too: check `deadline` before acting.
  package mutating func takeDropped() -> [String] {
    guard !dropped.isEmpty else { return [] }
    defer { dropped = [] }
    return dropped
  }

  // MARK: - Lists

  private mutating func find(_ key: String) -> Int32? {
    if lastFound >= 0, nodes[Int(lastFound)].slot != Self.unused, nodes[Int(lastFound)].key == key {
      return lastFound
    }
    if let missing = lastMissing, missing == key { return nil }
    guard let node = index[key] else {
      lastMissing = key
      return nil
    }
    lastFound = node
    return node
  }

  /// The slot number for a deadline: its own, kept within the ring (a deadline behind
  /// `base`, or past the horizon, is possible only after the clock went back).
  private func ringSlot(_ deadline: Int64) -> Int64 {
    min(max(deadline >> shift, base), base + Int64(Self.slotCount) - 1)
  }

  /// Moves the ring forward to now's slot: the lists of the slots it leaves (their
  /// deadlines have passed) join the stale list, each in O(1).
  private mutating func advance(now: Int64) {
    let nowSlot = now >> shift
    guard nowSlot > base else { return }
    if base != .min {
      var slot = base
      let end = min(nowSlot, base + Int64(Self.slotCount))
      while slot < end {
        splice(Int32(slot & Self.mask), onto: Self.stale)
        slot += 1
      }
    }
    base = nowSlot
  }

  /// Drops up to `atMost` keys whose deadline has passed.
  private mutating func dropPassed(now: Int64, atMost: Int) {
    for _ in 0..<atMost {
      let first = nodes[Int(Self.stale)].next
      guard first != Self.stale, nodes[Int(first)].deadline <= now else { return }
      report(first)
      drop(first)
    }
  }

  /// Drops a key whose deadline has passed, or else the first key of the earliest slot.
  private mutating func evictOne() {
    let first = nodes[Int(Self.stale)].next
    if first != Self.stale {
      report(first)
      drop(first)
      return
    }
    var slot = max(low, base)
    let end = base + Int64(Self.slotCount)
    while slot < end {
      let head = Int32(slot & Self.mask)
      let node = nodes[Int(head)].next
      if node != head {
        low = slot
        report(node)
        drop(node)
        return
      }
      slot += 1
    }
  }

  private mutating func report(_ node: Int32) {
    if reportsDrops { dropped.append(nodes[Int(node)].key) }
  }

  private mutating func allocate(_ key: String, deadline: Int64) -> Int32 {
    let fresh = Node(key: key, deadline: deadline, slot: Self.unused, prev: -1, next: -1)
    guard freeNode >= 0 else {
      nodes.append(fresh)
      return Int32(nodes.count - 1)
    }
    let node = freeNode
    freeNode = nodes[Int(node)].next
    nodes[Int(node)] = fresh
    return node
  }

  private mutating func drop(_ node: Int32) {
    unlink(node)
    index[nodes[Int(node)].key] = nil
    nodes[Int(node)].key = ""
    nodes[Int(node)].slot = Self.unused
    nodes[Int(node)].next = freeNode
    freeNode = node
  }

  /// Appends the node to the ring list of `slot` (`base` or more).
  private mutating func link(_ node: Int32, slot: Int64) {
    if slot < low { low = slot }
    let list = Int32(slot & Self.mask)
    let last = nodes[Int(list)].prev
    nodes[Int(node)].prev = last
    nodes[Int(node)].next = list
    nodes[Int(node)].slot = slot
    nodes[Int(last)].next = node
    nodes[Int(list)].prev = node
  }

  private mutating func unlink(_ node: Int32) {
    let prev = nodes[Int(node)].prev
    let next = nodes[Int(node)].next
    nodes[Int(prev)].next = next
    nodes[Int(next)].prev = prev
  }

  /// Appends the whole list `from` to the end of list `onto`, leaving `from` empty. Its
  /// nodes keep their slot numbers, now behind `base`: that is how a node is known to be
  /// in the stale list (`set` relinks it, since its new slot is `base` or more).
  private mutating func splice(_ from: Int32, onto: Int32) {
    let first = nodes[Int(from)].next
    guard first != from else { return }
    let last = nodes[Int(from)].prev
    let tail = nodes[Int(onto)].prev
    nodes[Int(tail)].next = first
    nodes[Int(first)].prev = tail
    nodes[Int(last)].next = onto
    nodes[Int(onto)].prev = last
    nodes[Int(from)].next = from
    nodes[Int(from)].prev = from
  }
}
