import Testing

@testable import AnonAuthDqlite

@Suite struct WireCodecTests {
  @Test func aRequestIsAHeaderAndAWordPaddedBody() throws {
    let bytes = try DqliteRequest.prepare(database: 3, sql: "SELECT 1").encoded()
    // Body: the database id (a word) and "SELECT 1\0" padded to 16 bytes.
    #expect(bytes.count == 8 + 8 + 16)
    #expect(Array(bytes[0..<8]) == [3, 0, 0, 0, 4, 0, 0, 0])
    #expect(Array(bytes[8..<16]) == [3, 0, 0, 0, 0, 0, 0, 0])
    #expect(Array(bytes[16..<25]) == Array("SELECT 1".utf8) + [0])
    #expect(bytes[25...].allSatisfy { $0 == 0 })
  }

  @Test func parametersCarryACountTypesPaddingThenValues() throws {
    let bytes = try DqliteRequest.exec(
      database: 1, statement: 2, parameters: [.integer(-1), .text("ab"), .null, .blob([9]), .real(1.5)]
    ).encoded()
    let body = Array(bytes[8...])
    #expect(body.count % 8 == 0)
    #expect(Array(body[8..<14]) == [5, 1, 3, 5, 4, 2])
    #expect(Array(body[16..<24]) == [UInt8](repeating: 0xFF, count: 8))  // -1
    #expect(Array(body[24..<32]) == [0x61, 0x62, 0, 0, 0, 0, 0, 0])  // "ab"
    #expect(Array(body[40..<48]) == [1, 0, 0, 0, 0, 0, 0, 0])  // blob length
    #expect(body[48] == 9)
    #expect(Array(body[56..<64]) == withUnsafeBytes(of: 1.5.bitPattern.littleEndian) { Array($0) })
  }

  @Test func textWithANulCannotBeSentAndTooManyParametersAreRefused() {
    #expect(throws: DqliteError.invalidRequest("text holds a NUL byte")) {
      try DqliteRequest.execSQL(database: 0, sql: "a\u{0}b", parameters: []).encoded()
    }
    #expect(throws: DqliteError.invalidRequest("more than 255 parameters")) {
      try DqliteRequest.execSQL(
        database: 0, sql: "x", parameters: Array(repeating: .null, count: 256)
      ).encoded()
    }
  }

  @Test func rowsDecodeEveryTypeAndTheMarker() throws {
    var encoder = WireEncoder()
    encoder.uint64(2)
    try encoder.text("id")
    try encoder.text("name")
    // Row 1: integer, text; row 2: null, blob. Low nibble first.
    encoder.uint64(UInt64(0x31))
    encoder.int64(42)
    try encoder.text("zoë")
    encoder.uint64(UInt64(0x45))
    encoder.uint64(0)
    encoder.blob([1, 2, 3])
    encoder.uint64(DqliteResponse.partMarker)
    let batch = try DqliteResponse.rows(encoder.body)
    #expect(batch.columns == ["id", "name"])
    #expect(batch.rows == [[.integer(42), .text("zoë")], [.null, .blob([1, 2, 3])]])
    #expect(batch.hasMore)
  }

  @Test func hostileBodiesAreMalformedNeverATrap() throws {
    func rows(_ build: (inout WireEncoder) throws -> Void) throws -> DqliteRowBatch {
      var encoder = WireEncoder()
      try build(&encoder)
      return try DqliteResponse.rows(encoder.body)
    }
    // A column count far beyond the body.
    #expect(throws: DqliteError.self) { try rows { $0.uint64(UInt64.max) } }
    // No marker at the end.
    #expect(throws: DqliteError.self) {
      try rows {
        $0.uint64(1)
        try $0.text("a")
      }
    }
    // A blob whose length runs past the body.
    #expect(throws: DqliteError.self) {
      try rows {
        $0.uint64(1)
        try $0.text("a")
        $0.uint64(4)
        $0.uint64(UInt64.max)
      }
    }
    // An unknown value type.
    #expect(throws: DqliteError.self) {
      try rows {
        $0.uint64(1)
        try $0.text("a")
        $0.uint64(7)
        $0.uint64(0)
        $0.uint64(DqliteResponse.doneMarker)
      }
    }
    // Text without its terminator, invalid UTF-8.
    #expect(throws: DqliteError.self) { try DqliteResponse.server([1, 0, 0, 0, 0, 0, 0, 0, 0x41]) }
    #expect(throws: DqliteError.self) {
      try DqliteResponse.server([1, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFE, 0, 0, 0, 0, 0, 0])
    }
    // A node list whose count is larger than the body could hold.
    #expect(throws: DqliteError.self) { try DqliteResponse.servers([9, 0, 0, 0, 0, 0, 0, 0]) }
    // A header announcing a body beyond the limit.
    #expect(throws: DqliteError.self) { try DqliteHeader([0xFF, 0xFF, 0xFF, 0xFF, 7, 0, 0, 0]) }
  }

  @Test func aFailureCarriesTheCodeAndMessage() throws {
    var encoder = WireEncoder()
    encoder.uint64(2067)
    try encoder.text("UNIQUE constraint failed: t.k")
    let header = DqliteHeader(bodyBytes: encoder.body.count, type: 0, schema: 0)
    #expect(throws: DqliteError.failure(code: 2067, message: "UNIQUE constraint failed: t.k")) {
      try DqliteResponse.check(header, encoder.body, expect: .result)
    }
    #expect(DqliteError.failure(code: 10250, message: "not leader").isLeadershipLost)
    #expect(DqliteError.failure(code: 12, message: "no database opened").isLeadershipLost)
    #expect(!DqliteError.failure(code: 12, message: "no statement with the given id").isLeadershipLost)
    #expect(!DqliteError.failure(code: 2067, message: "").isLeadershipLost)
  }

  @Test func addressesSplitIntoHostAndPort() throws {
    #expect(try DqliteSocket.split("127.0.0.1:9001") == ("127.0.0.1", "9001"))
    #expect(try DqliteSocket.split("[::1]:9001") == ("::1", "9001"))
    #expect(try DqliteSocket.split("node-0.anonauth:9001") == ("node-0.anonauth", "9001"))
    for bad in ["nohost", ":9001", "host:", "host:0", "host:70000", "host:x"] {
      #expect(throws: DqliteError.self) { try DqliteSocket.split(bad) }
    }
  }
}
