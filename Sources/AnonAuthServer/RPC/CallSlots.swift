/// The calls of one connection, for any transport: which ids are in flight, and how many
/// of the connection's slots are taken. A call holds its slot from admission until its
/// handler task has returned, not until it was answered: a call past its deadline is
/// answered at once (`expire`) but stays counted while its cancelled task winds down, so
/// no mix of expired calls lets one connection run more handlers than `limit`. Its id is
/// free for the client at once (it was answered); each admission gets a sequence number
/// that tells it from a later call with the same id, so a late task's end frees the right
/// slot and answers nobody. The payload of each call is charged to the byte budget until
/// its task returns. Confined to the connection's thread, like the connection.
struct CallSlots<Record> {
  /// What `admit` decided.
  enum Admission: Equatable {
    /// Taken: the call's sequence number, to give back to `expire` and `taskEnded`.
    case admitted(sequence: UInt64)
    /// The id is in flight (not yet answered): a protocol error of the client.
    case idInUse
    /// Every slot is taken (`TOO_MANY_CALLS`).
    case full
    /// The payload would take the peer or the process over the byte budget.
    case overBudget
  }

  let limit: Int
  private let bytes: ReceiveBudget.Account
  /// Calls not yet answered, by the client's id.
  private var live: [UInt64: (sequence: UInt64, record: Record, bytes: Int)] = [:]
  /// Calls answered (expired) whose task has not returned, by sequence: their bytes.
  private var winding: [UInt64: Int] = [:]
  private var nextSequence: UInt64 = 0

  init(limit: Int, bytes: ReceiveBudget.Account) {
    self.limit = limit
    self.bytes = bytes
  }

  /// Slots taken: calls in flight and expired calls whose task still runs.
  var taken: Int { live.count + winding.count }
  /// Calls still to be answered.
  var unanswered: Int { live.count }
  /// The records of the calls still to be answered.
  var records: [Record] { live.values.map(\.record) }

  /// Takes a slot for call `id` with a payload of `payloadBytes`, or says why not (and
  /// takes nothing). `record` is made only once the call is admitted.
  mutating func admit(_ id: UInt64, payloadBytes: Int, record: (UInt64) -> Record) -> Admission {
    if live[id] != nil { return .idInUse }
    if taken >= limit { return .full }
    guard bytes.resize(to: bytes.charged + payloadBytes) else { return .overBudget }
    nextSequence += 1
    live[id] = (nextSequence, record(nextSequence), payloadBytes)
    return .admitted(sequence: nextSequence)
  }

  /// The call's deadline passed: returns its record to answer (and cancel), and keeps
  /// its slot until `taskEnded`; nil when it was answered already or the id belongs to
  /// a newer call.
  mutating func expire(_ id: UInt64, sequence: UInt64) -> Record? {
    guard let call = live[id], call.sequence == sequence else { return nil }
    live[id] = nil
    winding[sequence] = call.bytes
    return call.record
  }

  /// The call's task returned: its slot and bytes are free. Returns its record when the
  /// call is still to be answered (with the task's result); nil when it expired first.
  mutating func taskEnded(_ id: UInt64, sequence: UInt64) -> Record? {
    if let held = winding.removeValue(forKey: sequence) {
      _ = bytes.resize(to: bytes.charged - held)
      return nil
    }
    guard let call = live[id], call.sequence == sequence else { return nil }
    live[id] = nil
    _ = bytes.resize(to: bytes.charged - call.bytes)
    return call.record
  }

  /// The peer gave up on call `id` before its answer (an HTTP/2 stream reset): returns its
  /// record (its task to cancel) and keeps the slot until `taskEnded`, as `expire` does,
  /// but nobody is answered; nil when it is not in flight.
  mutating func abandon(_ id: UInt64) -> Record? {
    guard let call = live[id] else { return nil }
    return expire(id, sequence: call.sequence)
  }

  /// The connection closed: forgets every call and gives the bytes back; returns the
  /// records of the calls still to be answered (their tasks to cancel).
  mutating func removeAll() -> [Record] {
    let left = records
    live.removeAll()
    winding.removeAll()
    bytes.release()
    return left
  }
}
