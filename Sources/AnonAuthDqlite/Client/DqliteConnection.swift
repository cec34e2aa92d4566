/// One client connection to one dqlite node, speaking the node's wire protocol
/// (version 1): each request is answered by one response, or by a run of `ROWS` batches.
///
/// Blocking and not thread-safe by design: the store gives each of its threads (the
/// writer, each reader) a connection of its own, as it gives each a SQLite handle in the
/// single-file engine. After an I/O or protocol error the connection is closed and every
/// further call fails fast, so a caller can tell it must connect again.
public final class DqliteConnection {
  /// The address this connection was opened to.
  public let address: String
  private let socket: DqliteSocket

  /// Requests written whose responses are not read yet, oldest first, by the answer each
  /// expects: `send` and `sendQuery` add one, and the next call that waits reads them
  /// before its own (the node answers in order).
  private var unanswered: [(answer: DqliteAnswer.Kind, bytes: Int)] = []
  private var unansweredRead = 0
  /// Bytes of the pipelined requests whose answers are not read yet.
  private var unansweredBytes = 0

  /// At most this many pipelined requests, and this many of their bytes, wait for their
  /// answers; past either the next send first reads the older half of them, so that the
  /// node always has requests queued while the client prepares more. dqlite 1.11 reads a request only
  /// once the answer before it is written: with the client not reading, the node stops
  /// when its answers fill the socket, the client's sends then fill it the other way,
  /// and both wait for the socket timeout. On a unix socket each small message is charged
  /// about a kilobyte of the default 208 KiB buffer, so a few hundred requests deadlock
  /// (a batch of 128 sign-ups sends some 900; it stalled every batch for seconds). These
  /// bounds stay well below that.
  static let maxUnanswered = 128
  static let maxUnansweredBytes = 48 << 10
  /// The outcomes of pipelined requests read so far, oldest first, until `settle` or
  /// `takeSettled` hands them over.
  private var settled: [Result<DqliteAnswer, DqliteError>] = []

  /// Requests sent on this connection, pipelined or not.
  public private(set) var requestsSent = 0
  /// Times this connection waited for the node: one per call that reads a response, however
  /// many pipelined responses that wait collects. What a job costs in latency is its round
  /// trips, not its requests.
  public private(set) var roundTrips = 0

  /// The protocol version a client announces first. (Servers before 1.0 used another
  /// magic number; dqlite 1.11 speaks this one.)
  static let protocolVersion: UInt64 = 1

  public init(address: String, timeoutMs: Int = DqliteTimeouts.nodeMs) throws(DqliteError) {
    self.address = address
    socket = try DqliteSocket(address: address, timeoutMs: timeoutMs)
    var handshake = WireEncoder()
    handshake.uint64(Self.protocolVersion)
    try socket.send(handshake.body)
  }

  public var isOpen: Bool { socket.isOpen }

  public func close() { socket.close() }

  /// Ends the stream as a node that went away (or stopped leading and closed it) would,
  /// without this side knowing yet: for tests of what the next call does.
  public func shutDownForTesting() { socket.shutDown() }

  // MARK: Cluster

  /// The leader this node knows of, or nil when it knows none (an election is running,
  /// or the node has lost its quorum).
  public func leader() throws(DqliteError) -> (id: UInt64, address: String)? {
    let (header, body) = try roundTrip(.leader)
    try DqliteResponse.check(header, body, expect: .server)
    let leader = try DqliteResponse.server(body)
    return leader.address.isEmpty ? nil : leader
  }

  /// Every node of the cluster with its role. Only the leader answers it reliably.
  public func cluster() throws(DqliteError) -> [DqliteNodeInfo] {
    let (header, body) = try roundTrip(.cluster)
    try DqliteResponse.check(header, body, expect: .servers)
    return try DqliteResponse.servers(body)
  }

  /// Adds a node as a spare; `assign` then gives it its role. Sent to the leader.
  public func add(id: UInt64, address: String) throws(DqliteError) {
    try expectEmpty(.add(id: id, address: address))
  }

  public func assign(id: UInt64, role: DqliteRole) throws(DqliteError) {
    try expectEmpty(.assign(id: id, role: role))
  }

  public func remove(id: UInt64) throws(DqliteError) {
    try expectEmpty(.remove(id: id))
  }

  /// Hands leadership to another voter (a graceful step-down before a restart).
  public func transfer(to id: UInt64) throws(DqliteError) {
    try expectEmpty(.transfer(id: id))
  }

  /// The database's files as the leader has them now: the main file and its WAL, a
  /// consistent copy that SQLite opens (and checkpoints) like any other. The whole
  /// database travels in one message, held in memory here.
  public func dump(_ name: String) throws(DqliteError) -> [(name: String, bytes: [UInt8])] {
    try write(.dump(name: name))
    roundTrips += 1
    try readUnanswered()
    let (header, body) = try readResponse(maxBodyBytes: DqliteHeader.maxDumpBodyBytes)
    try DqliteResponse.check(header, body, expect: .files)
    return try DqliteResponse.files(body)
  }

  // MARK: SQL

  /// Opens (creating if need be) the replicated database `name`; its id is used by every
  /// statement on this connection.
  public func open(_ name: String) throws(DqliteError) -> UInt32 {
    let (header, body) = try roundTrip(.open(name: name, flags: 0, vfs: ""))
    try DqliteResponse.check(header, body, expect: .database)
    return try DqliteResponse.database(body)
  }

  public func prepare(database: UInt32, sql: String) throws(DqliteError) -> (
    statement: UInt32, parameters: Int
  ) {
    let (header, body) = try roundTrip(.prepare(database: database, sql: sql))
    try DqliteResponse.check(header, body, expect: .statement)
    let prepared = try DqliteResponse.statement(body)
    return (prepared.statement, prepared.parameters)
  }

  public func exec(
    database: UInt32, statement: UInt32, parameters: [DqliteValue] = []
  ) throws(DqliteError) -> DqliteExecResult {
    try result(of: .exec(database: database, statement: statement, parameters: parameters))
  }

  /// Sends an `EXEC` without waiting for its answer (pipelining). dqlite 1.11 reads a
  /// connection's next request only after it has written the answer to the one before
  /// (src/conn.c: the write callback starts the next read), so requests queue in the
  /// socket and run in order, each whatever the outcome of the one before. The answer is
  /// read by the next call that waits, or by `settle`.
  public func send(database: UInt32, statement: UInt32, parameters: [DqliteValue] = []) throws(DqliteError) {
    try pipeline(.exec(database: database, statement: statement, parameters: parameters), answer: .result)
  }

  /// Sends an `EXEC_SQL` without waiting for its answer, as `send` does an `EXEC`.
  public func send(database: UInt32, sql: String, parameters: [DqliteValue] = []) throws(DqliteError) {
    try pipeline(.execSQL(database: database, sql: sql, parameters: parameters), answer: .result)
  }

  /// Sends a prepared `QUERY` without waiting for its rows, as `send` does an `EXEC`:
  /// its rows are read, all of them, with the answers around it. For small results (a
  /// row or a few): they are held in memory until claimed.
  public func sendQuery(database: UInt32, statement: UInt32, parameters: [DqliteValue] = [])
    throws(DqliteError)
  {
    try pipeline(.query(database: database, statement: statement, parameters: parameters), answer: .rows)
  }

  /// Whether pipelined answers are still unread or unclaimed.
  public var hasPipelined: Bool { unansweredRead < unanswered.count || !settled.isEmpty }

  /// Reads every pipelined answer still unread (one round trip, if any is) and hands over
  /// the outcomes of all pipelined requests since the last call, oldest first.
  public func settle() throws(DqliteError) -> [Result<DqliteAnswer, DqliteError>] {
    if unansweredRead < unanswered.count {
      roundTrips += 1
      try readUnanswered()
    }
    return takeSettled()
  }

  /// The outcomes of pipelined requests read so far (by `settle` or by a later call that
  /// waited), oldest first; it forgets them.
  public func takeSettled() -> [Result<DqliteAnswer, DqliteError>] {
    defer { settled = [] }
    return settled
  }

  public func finalize(database: UInt32, statement: UInt32) throws(DqliteError) {
    try expectEmpty(.finalize(database: database, statement: statement))
  }

  /// Runs SQL that may hold several statements; parameters bind to the first.
  public func execSQL(
    database: UInt32, sql: String, parameters: [DqliteValue] = []
  ) throws(DqliteError) -> DqliteExecResult {
    try result(of: .execSQL(database: database, sql: sql, parameters: parameters))
  }

  /// Runs a prepared query, handing each row to `body` as its batch arrives; returns the
  /// column names. Every batch is read even when `body` throws, so the connection stays in
  /// step with the node; the first error is rethrown at the end.
  public func query(
    database: UInt32, statement: UInt32, parameters: [DqliteValue] = [],
    body: ([DqliteValue]) throws -> Void
  ) throws -> [String] {
    try rows(of: .query(database: database, statement: statement, parameters: parameters), body: body)
  }

  public func querySQL(
    database: UInt32, sql: String, parameters: [DqliteValue] = [], body: ([DqliteValue]) throws -> Void
  ) throws -> [String] {
    try rows(of: .querySQL(database: database, sql: sql, parameters: parameters), body: body)
  }

  /// All rows of a query, for results known to be small.
  public func queryAll(
    database: UInt32, sql: String, parameters: [DqliteValue] = []
  ) throws(DqliteError) -> [[DqliteValue]] {
    var all: [[DqliteValue]] = []
    do {
      _ = try querySQL(database: database, sql: sql, parameters: parameters) { all.append($0) }
    } catch let error as DqliteError {
      throw error
    } catch {
      throw .malformed("unexpected \(error)")
    }
    return all
  }

  // MARK: Plumbing

  private func rows(of request: DqliteRequest, body: ([DqliteValue]) throws -> Void) throws -> [String] {
    var (header, message) = try roundTrip(request)
    var columns: [String] = []
    var bodyError: (any Error)?
    while true {
      try DqliteResponse.check(header, message, expect: .rows)
      let batch = try DqliteResponse.rows(message)
      columns = batch.columns
      if bodyError == nil {
        for row in batch.rows {
          do { try body(row) } catch {
            bodyError = error
            break
          }
        }
      }
      guard batch.hasMore else { break }
      (header, message) = try readResponse()
    }
    if let bodyError { throw bodyError }
    return columns
  }

  private func result(of request: DqliteRequest) throws(DqliteError) -> DqliteExecResult {
    let (header, body) = try roundTrip(request)
    try DqliteResponse.check(header, body, expect: .result)
    return try DqliteResponse.result(body)
  }

  private func expectEmpty(_ request: DqliteRequest) throws(DqliteError) {
    let (header, body) = try roundTrip(request)
    try DqliteResponse.check(header, body, expect: .empty)
  }

  /// Sends `request` and waits for its answer, reading first the answers of the requests
  /// pipelined before it: they travel in the same flight.
  private func roundTrip(_ request: DqliteRequest) throws(DqliteError) -> (DqliteHeader, [UInt8]) {
    try write(request)
    roundTrips += 1
    try readUnanswered()
    return try readResponse()
  }

  private func write(_ request: DqliteRequest) throws(DqliteError) {
    try socket.send(try request.encoded())
    requestsSent += 1
  }

  /// Writes a request whose answer is read later, first reading the answers waiting if
  /// the pipeline is full (`maxUnanswered`): that wait is counted as a round trip.
  private func pipeline(_ request: DqliteRequest, answer kind: DqliteAnswer.Kind) throws(DqliteError) {
    let bytes = try request.encoded()
    let waiting = unanswered.count - unansweredRead
    if waiting > 0, waiting >= Self.maxUnanswered || unansweredBytes + bytes.count > Self.maxUnansweredBytes {
      roundTrips += 1
      try readUnanswered(leaving: Self.maxUnanswered / 2, bytes: Self.maxUnansweredBytes / 2)
    }
    try socket.send(bytes)
    requestsSent += 1
    unanswered.append((kind, bytes.count))
    unansweredBytes += bytes.count
  }

  /// Reads the pipelined answers in order. A failure the node answered is kept as that
  /// request's outcome; one that leaves the stream unusable (I/O, a malformed message)
  /// is thrown, and the connection is closed.
  /// With `leaving`, it stops once no more than that many requests (and `bytes` of
  /// them) still wait.
  private func readUnanswered(leaving: Int = 0, bytes: Int = 0) throws(DqliteError) {
    defer {
      if unansweredRead == unanswered.count {
        unanswered.removeAll(keepingCapacity: true)
        unansweredRead = 0
        unansweredBytes = 0
      }
    }
    while unanswered.count - unansweredRead > leaving
      || (unansweredBytes > bytes && unansweredRead < unanswered.count)
    {
      let (kind, size) = unanswered[unansweredRead]
      let outcome: Result<DqliteAnswer, DqliteError>
      do {
        outcome = .success(try readAnswer(kind))
      } catch {
        guard case .failure = error else {
          socket.close()
          throw error
        }
        outcome = .failure(error)
      }
      unansweredRead += 1
      unansweredBytes -= size
      settled.append(outcome)
    }
  }

  /// One pipelined answer: a result, or every `ROWS` message of a query. A failure the
  /// node answered is thrown as `.failure`, with the stream still in step.
  private func readAnswer(_ kind: DqliteAnswer.Kind) throws(DqliteError) -> DqliteAnswer {
    var (header, body) = try readResponse()
    switch kind {
    case .result:
      try DqliteResponse.check(header, body, expect: .result)
      return .result(try DqliteResponse.result(body))
    case .rows:
      var rows: [[DqliteValue]] = []
      while true {
        try DqliteResponse.check(header, body, expect: .rows)
        let batch = try DqliteResponse.rows(body)
        rows += batch.rows
        guard batch.hasMore else { return .rows(rows) }
        (header, body) = try readResponse()
      }
    }
  }

  private func readResponse(
    maxBodyBytes: Int = DqliteHeader.maxBodyBytes
  ) throws(DqliteError) -> (DqliteHeader, [UInt8]) {
    do {
      let header = try DqliteHeader(try socket.receive(8), maxBodyBytes: maxBodyBytes)
      let body = try socket.receive(header.bodyBytes)
      return (header, body)
    } catch {
      // A header the client refuses leaves the stream at an unknown place.
      socket.close()
      throw error
    }
  }
}
