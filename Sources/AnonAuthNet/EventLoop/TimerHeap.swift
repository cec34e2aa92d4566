/// A min-heap of deadlines with lazy cancellation: cancelling drops the callback, and a
/// popped entry without one is skipped. Confined to one event loop's thread.
struct TimerHeap {
  private struct Entry {
    let deadline: UInt64
    let id: UInt64
  }

  private var heap: [Entry] = []
  private var callbacks: [UInt64: () -> Void] = [:]
  private var nextID: UInt64 = 1

  var isEmpty: Bool { callbacks.isEmpty }

  mutating func schedule(at deadline: UInt64, _ callback: @escaping () -> Void) -> UInt64 {
    let id = nextID
    nextID += 1
    callbacks[id] = callback
    heap.append(Entry(deadline: deadline, id: id))
    siftUp(heap.count - 1)
    return id
  }

  mutating func cancel(_ id: UInt64) {
    callbacks[id] = nil
    if callbacks.isEmpty { heap.removeAll(keepingCapacity: false) }
  }

  /// The earliest live deadline, discarding cancelled entries on the way.
  mutating func nextDeadline() -> UInt64? {
    while let top = heap.first {
      if callbacks[top.id] != nil { return top.deadline }
      popTop()
    }
    return nil
  }

  /// Removes and returns the callbacks due at `now`, earliest first, at most `limit` of
  /// them: the rest stay due for the caller's next turn.
  mutating func popDue(now: UInt64, limit: Int) -> [() -> Void] {
    var due: [() -> Void] = []
    while due.count < limit, let top = heap.first, top.deadline <= now {
      popTop()
      if let callback = callbacks.removeValue(forKey: top.id) { due.append(callback) }
    }
    return due
  }

  private mutating func popTop() {
    let last = heap.removeLast()
    if !heap.isEmpty {
      heap[0] = last
      siftDown(0)
    }
  }

  private mutating func siftUp(_ index: Int) {
    var child = index
    while child > 0 {
      let parent = (child - 1) / 2
      if heap[parent].deadline <= heap[child].deadline { break }
      heap.swapAt(parent, child)
      child = parent
    }
  }

  private mutating func siftDown(_ index: Int) {
    var parent = index
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
      if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
      if smallest == parent { return }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
  }
}
