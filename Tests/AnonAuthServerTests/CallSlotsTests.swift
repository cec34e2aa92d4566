import Testing

@testable import AnonAuthServer

/// The per-connection slot table every transport uses, driven in process: an expired
/// call is answered at once but keeps its slot until its task returns; its id is free
/// for a new call at once; a late task's end frees its own slot and answers nobody; the
/// payloads are charged to the byte budget until the tasks return.
@Suite struct CallSlotsTests {
  static let mib = 1024 * 1024

  static func slots(limit: Int, budget: ReceiveBudget? = nil) -> (CallSlots<String>, ReceiveBudget) {
    let budget = budget ?? ReceiveBudget(maxBytes: 64 * mib, maxBytesPerIP: 32 * mib, exempt: [])
    return (CallSlots(limit: limit, bytes: budget.account(for: "192.0.2.1")), budget)
  }

  static func sequence(_ admission: CallSlots<String>.Admission) -> UInt64? {
    if case .admitted(let sequence) = admission { return sequence }
    return nil
  }

  @Test func expiredCallsHoldTheirSlotsUntilTheirTasksReturn() throws {
    var (slots, _) = Self.slots(limit: 3)
    var sequences: [UInt64] = []
    for id in UInt64(1)...3 {
      sequences.append(try #require(Self.sequence(slots.admit(id, payloadBytes: 10) { "call \(id) #\($0)" })))
    }
    #expect(slots.admit(4, payloadBytes: 10) { _ in "four" } == .full)
    // All three expire: each is answered (its record comes back once), none frees a slot.
    for (index, id) in (UInt64(1)...3).enumerated() {
      #expect(slots.expire(id, sequence: sequences[index]) == "call \(id) #\(sequences[index])")
      #expect(slots.expire(id, sequence: sequences[index]) == nil)
    }
    #expect(slots.unanswered == 0)
    #expect(slots.taken == 3)
    #expect(slots.admit(4, payloadBytes: 10) { _ in "four" } == .full)
    // A task returns: its slot is free, and there is no one to answer.
    #expect(slots.taskEnded(2, sequence: sequences[1]) == nil)
    #expect(slots.taken == 2)
    #expect(Self.sequence(slots.admit(4, payloadBytes: 10) { _ in "four" }) != nil)
    #expect(slots.admit(5, payloadBytes: 10) { _ in "five" } == .full)
  }

  /// The client may reuse the id of an expired call at once; the old task's end frees
  /// the old slot and does not answer (or end) the new call.
  @Test func anExpiredIdIsFreeAtOnceAndALateEndAnswersNobody() throws {
    var (slots, _) = Self.slots(limit: 2)
    let old = try #require(Self.sequence(slots.admit(7, payloadBytes: 1) { _ in "old" }))
    #expect(slots.admit(7, payloadBytes: 1) { _ in "dup" } == .idInUse)
    #expect(slots.expire(7, sequence: old) == "old")
    let new = try #require(Self.sequence(slots.admit(7, payloadBytes: 1) { _ in "new" }))
    #expect(new != old)
    #expect(slots.admit(8, payloadBytes: 1) { _ in "x" } == .full)  // the old task still runs
    #expect(slots.taskEnded(7, sequence: old) == nil)
    #expect(slots.unanswered == 1 && slots.taken == 1)
    #expect(slots.taskEnded(7, sequence: new) == "new")
    #expect(slots.taken == 0)
  }

  @Test func payloadsAreChargedUntilTheTasksReturn() throws {
    let budget = ReceiveBudget(maxBytes: 64 * Self.mib, maxBytesPerIP: 4 * Self.mib, exempt: [])
    var (slots, _) = Self.slots(limit: 10, budget: budget)
    let a = try #require(Self.sequence(slots.admit(1, payloadBytes: 3 * Self.mib) { _ in "a" }))
    #expect(slots.admit(2, payloadBytes: 2 * Self.mib) { _ in "b" } == .overBudget)
    #expect(budget.bytes(forPeer: "192.0.2.1") == 3 * Self.mib)
    _ = slots.expire(1, sequence: a)
    #expect(budget.bytes(forPeer: "192.0.2.1") == 3 * Self.mib)  // still held by the running task
    _ = slots.taskEnded(1, sequence: a)
    #expect(budget.bytes(forPeer: "192.0.2.1") == 0)
    _ = slots.admit(2, payloadBytes: 2 * Self.mib) { _ in "b" }
    #expect(slots.removeAll() == ["b"])
    #expect(budget.totalBytes == 0)
  }
}
