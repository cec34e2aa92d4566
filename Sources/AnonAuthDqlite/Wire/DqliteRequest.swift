/// The client requests AnonAuth sends, with their type codes from dqlite's wire protocol.
enum DqliteRequest {
  case leader
  case open(name: String, flags: UInt64, vfs: String)
  case prepare(database: UInt32, sql: String)
  case exec(database: UInt32, statement: UInt32, parameters: [DqliteValue])
  case query(database: UInt32, statement: UInt32, parameters: [DqliteValue])
  case finalize(database: UInt32, statement: UInt32)
  case execSQL(database: UInt32, sql: String, parameters: [DqliteValue])
  case querySQL(database: UInt32, sql: String, parameters: [DqliteValue])
  case add(id: UInt64, address: String)
  case assign(id: UInt64, role: DqliteRole)
  case remove(id: UInt64)
  case cluster
  case transfer(id: UInt64)
  case dump(name: String)

  var typeCode: UInt8 {
    switch self {
    case .leader: 0
    case .open: 3
    case .prepare: 4
    case .exec: 5
    case .query: 6
    case .finalize: 7
    case .execSQL: 8
    case .querySQL: 9
    case .add: 12
    case .assign: 13
    case .remove: 14
    case .cluster: 16
    case .transfer: 17
    case .dump: 15
    }
  }

  /// The request as bytes, header included.
  func encoded() throws(DqliteError) -> [UInt8] {
    var encoder = WireEncoder()
    var schema: UInt8 = 0
    switch self {
    case .leader: encoder.uint64(0)
    case .remove(let id), .transfer(let id): encoder.uint64(id)
    case .open(let name, let flags, let vfs):
      try encoder.text(name)
      encoder.uint64(flags)
      try encoder.text(vfs)
    case .prepare(let database, let sql):
      encoder.uint64(UInt64(database))
      try encoder.text(sql)
    case .exec(let database, let statement, let parameters),
      .query(let database, let statement, let parameters):
      encoder.uint32(database)
      encoder.uint32(statement)
      try encoder.parameters(parameters)
    case .finalize(let database, let statement):
      encoder.uint32(database)
      encoder.uint32(statement)
    case .execSQL(let database, let sql, let parameters), .querySQL(let database, let sql, let parameters):
      encoder.uint64(UInt64(database))
      try encoder.text(sql)
      try encoder.parameters(parameters)
    case .add(let id, let address):
      encoder.uint64(id)
      try encoder.text(address)
    case .assign(let id, let role):
      encoder.uint64(id)
      encoder.uint64(role.rawValue)
    case .dump(let name): try encoder.text(name)
    case .cluster:
      // Format 1: each node with its role.
      encoder.uint64(1)
      schema = 0
    }
    return encoder.message(type: typeCode, schema: schema)
  }
}

/// A node's part in the cluster: voters elect the leader and hold the quorum; stand-bys
/// replicate and can be promoted; spares only know the cluster.
public enum DqliteRole: UInt64, Sendable, CustomStringConvertible {
  case voter = 0
  case standBy = 1
  case spare = 2

  public var description: String {
    switch self {
    case .voter: "voter"
    case .standBy: "stand-by"
    case .spare: "spare"
    }
  }
}
