/// A message header as the node sends it.
struct DqliteHeader: Equatable {
  /// Body length in bytes (the wire carries it in 8-byte words).
  let bodyBytes: Int
  let type: UInt8
  let schema: UInt8

  /// Larger bodies are refused before any of them is read: a broken or hostile node must
  /// not make the client allocate without bound. Query results arrive in batches far
  /// below this.
  static let maxBodyBytes = 64 << 20
  /// A `DUMP` answers with the whole database in one message.
  static let maxDumpBodyBytes = 16 << 30

  init(bodyBytes: Int, type: UInt8, schema: UInt8) {
    self.bodyBytes = bodyBytes
    self.type = type
    self.schema = schema
  }

  init(_ bytes: [UInt8], maxBodyBytes: Int = Self.maxBodyBytes) throws(DqliteError) {
    guard bytes.count == 8 else { throw .malformed("header is \(bytes.count) bytes") }
    let words = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    guard UInt64(words) * 8 <= UInt64(maxBodyBytes) else {
      throw .malformed("body of \(words) words is over the limit")
    }
    self.init(bodyBytes: Int(words) * 8, type: bytes[4], schema: bytes[5])
  }
}

/// The response types AnonAuth reads.
enum DqliteResponseType: UInt8 {
  case failure = 0
  case server = 1
  case welcome = 2
  case servers = 3
  case database = 4
  case statement = 5
  case result = 6
  case rows = 7
  case empty = 8
  case files = 9
}

/// A node of the cluster as the leader knows it.
public struct DqliteNodeInfo: Sendable, Hashable {
  public let id: UInt64
  public let address: String
  public let role: DqliteRole

  public init(id: UInt64, address: String, role: DqliteRole) {
    self.id = id
    self.address = address
    self.role = role
  }
}

/// What an `EXEC` changed.
public struct DqliteExecResult: Sendable, Equatable {
  public let lastInsertID: Int64
  public let rowsAffected: Int64
}

/// The answer to a pipelined request: what an `EXEC` changed, or all of a query's rows.
public enum DqliteAnswer: Sendable, Equatable {
  case result(DqliteExecResult)
  case rows([[DqliteValue]])

  /// Which answer a pipelined request waits for.
  enum Kind { case result, rows }

  public var result: DqliteExecResult? {
    if case .result(let result) = self { result } else { nil }
  }

  public var rows: [[DqliteValue]]? {
    if case .rows(let rows) = self { rows } else { nil }
  }
}

/// One `ROWS` message: the column names, the rows it carries, and whether more follow.
struct DqliteRowBatch: Equatable {
  var columns: [String]
  var rows: [[DqliteValue]]
  var hasMore: Bool
}

/// Decoders for each response body. A failure response becomes a thrown
/// `DqliteError.failure` wherever it arrives, so callers only handle the success shape.
enum DqliteResponse {
  /// Column counts above this are malformed (SQLite's own default limit is 2,000).
  static let maxColumns: UInt64 = 32_767

  static func check(_ header: DqliteHeader, _ body: [UInt8], expect: DqliteResponseType) throws(DqliteError) {
    if header.type == DqliteResponseType.failure.rawValue { throw failure(body) }
    guard header.type == expect.rawValue else {
      throw .unexpectedResponse(type: header.type, expected: "\(expect)")
    }
  }

  static func failure(_ body: [UInt8]) -> DqliteError {
    var decoder = WireDecoder(body)
    do {
      let code = try decoder.uint64("failure code")
      let message = (try? decoder.text("failure message")) ?? ""
      return .failure(code: code, message: message)
    } catch {
      return error
    }
  }

  static func server(_ body: [UInt8]) throws(DqliteError) -> (id: UInt64, address: String) {
    var decoder = WireDecoder(body)
    let id = try decoder.uint64("leader id")
    let address = try decoder.text("leader address")
    return (id, address)
  }

  static func database(_ body: [UInt8]) throws(DqliteError) -> UInt32 {
    var decoder = WireDecoder(body)
    return try decoder.uint32("database id")
  }

  static func statement(_ body: [UInt8]) throws(DqliteError) -> (
    database: UInt32, statement: UInt32, parameters: Int
  ) {
    var decoder = WireDecoder(body)
    let database = try decoder.uint32("database id")
    let statement = try decoder.uint32("statement id")
    let parameters = try decoder.uint64("parameter count")
    guard parameters <= 32_766 else { throw .malformed("statement has \(parameters) parameters") }
    return (database, statement, Int(parameters))
  }

  static func result(_ body: [UInt8]) throws(DqliteError) -> DqliteExecResult {
    var decoder = WireDecoder(body)
    let lastInsert = try decoder.uint64("last insert id")
    let affected = try decoder.uint64("rows affected")
    return DqliteExecResult(
      lastInsertID: Int64(bitPattern: lastInsert), rowsAffected: Int64(bitPattern: affected))
  }

  static func servers(_ body: [UInt8]) throws(DqliteError) -> [DqliteNodeInfo] {
    var decoder = WireDecoder(body)
    let count = try decoder.uint64("node count")
    // Each node takes at least three words, which bounds the count by the body.
    guard count <= UInt64(decoder.remaining / 24) else { throw .malformed("node count \(count)") }
    var nodes: [DqliteNodeInfo] = []
    for _ in 0..<count {
      let id = try decoder.uint64("node id")
      let address = try decoder.text("node address")
      let rawRole = try decoder.uint64("node role")
      guard let role = DqliteRole(rawValue: rawRole) else { throw .malformed("node role \(rawRole)") }
      nodes.append(DqliteNodeInfo(id: id, address: address, role: role))
    }
    return nodes
  }

  /// A `DUMP`'s files (the database and its WAL): each a name, a size, and the bytes, which
  /// the node keeps word-aligned.
  static func files(_ body: [UInt8]) throws(DqliteError) -> [(name: String, bytes: [UInt8])] {
    var decoder = WireDecoder(body)
    let count = try decoder.uint64("file count")
    guard count <= 16 else { throw .malformed("file count \(count)") }
    var files: [(name: String, bytes: [UInt8])] = []
    for _ in 0..<count {
      let name = try decoder.text("file name")
      let size = try decoder.uint64("file size")
      guard size <= UInt64(decoder.remaining) else { throw .malformed("file \(name) longer than the body") }
      files.append((name, Array(try decoder.bytes(Int(size), "file"))))
      try decoder.alignToWord("file")
    }
    return files
  }

  static let doneMarker: UInt64 = 0xFFFF_FFFF_FFFF_FFFF
  static let partMarker: UInt64 = 0xEEEE_EEEE_EEEE_EEEE

  static func rows(_ body: [UInt8]) throws(DqliteError) -> DqliteRowBatch {
    var decoder = WireDecoder(body)
    let columnCount = try decoder.uint64("column count")
    guard columnCount <= maxColumns, columnCount <= UInt64(decoder.remaining) else {
      throw .malformed("column count \(columnCount)")
    }
    var columns: [String] = []
    for _ in 0..<columnCount { columns.append(try decoder.text("column name")) }
    var rows: [[DqliteValue]] = []
    while true {
      guard let word = decoder.peekWord() else { throw .malformed("rows end without a marker") }
      if word == doneMarker || word == partMarker {
        _ = try decoder.uint64("marker")
        guard decoder.isAtEnd else { throw .malformed("bytes after the rows marker") }
        return DqliteRowBatch(columns: columns, rows: rows, hasMore: word == partMarker)
      }
      guard columnCount > 0 else { throw .malformed("a row of a result without columns") }
      rows.append(try row(&decoder, columns: Int(columnCount)))
    }
  }

  private static func row(_ decoder: inout WireDecoder, columns: Int) throws(DqliteError) -> [DqliteValue] {
    let header = try decoder.bytes((columns + 1) / 2, "row header")
    try decoder.alignToWord("row header")
    var values: [DqliteValue] = []
    values.reserveCapacity(columns)
    for column in 0..<columns {
      let byte = header[header.startIndex + column / 2]
      let nibble = column % 2 == 0 ? byte & 0x0F : byte >> 4
      guard let type = DqliteTypeCode(rawValue: nibble) else { throw .malformed("value type \(nibble)") }
      values.append(try value(&decoder, type: type))
    }
    return values
  }

  private static func value(_ decoder: inout WireDecoder, type: DqliteTypeCode) throws(DqliteError)
    -> DqliteValue
  {
    switch type {
    case .integer, .unixTime, .boolean: return .integer(Int64(bitPattern: try decoder.uint64("integer")))
    case .real: return .real(Double(bitPattern: try decoder.uint64("real")))
    case .text, .iso8601: return .text(try decoder.text("text"))
    case .blob: return .blob(try decoder.blob("blob"))
    case .null:
      _ = try decoder.uint64("null")
      return .null
    }
  }
}
