import AnonAuthStore
import Testing

@Suite("Row accessors")
struct RowTests {
  let row = Row([.integer(42), .real(2.5), .text("hi"), .blob([1, 2]), .null])

  @Test("typed accessors read their own type")
  func typed() throws {
    #expect(try row.int(0) == 42)
    #expect(try row.int64(0) == 42)
    #expect(try row.bool(0))
    #expect(try row.double(1) == 2.5)
    #expect(try row.double(0) == 42)
    #expect(try row.string(2) == "hi")
    #expect(try row.blob(3) == [1, 2])
    #expect(try row.blob(2) == Array("hi".utf8))
    #expect(try row.isNull(4))
    #expect(try !row.isNull(0))
  }

  @Test("optional accessors turn NULL into nil")
  func optionals() throws {
    #expect(try row.optionalInt(4) == nil)
    #expect(try row.optionalInt64(4) == nil)
    #expect(try row.optionalBool(4) == nil)
    #expect(try row.optionalDouble(4) == nil)
    #expect(try row.optionalString(4) == nil)
    #expect(try row.optionalBlob(4) == nil)
    #expect(try row.optionalInt(0) == 42)
    #expect(try row.optionalString(2) == "hi")
  }

  /// One accessor call, named for the test report.
  struct Access: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let call: @Sendable (Row) throws -> Void
  }

  @Test(
    "a wrong type or a missing column throws a conversion error, never traps",
    arguments: [
      Access(testDescription: "int of text") { _ = try $0.int(2) },
      Access(testDescription: "string of integer") { _ = try $0.string(0) },
      Access(testDescription: "double of text") { _ = try $0.double(2) },
      Access(testDescription: "blob of integer") { _ = try $0.blob(0) },
      Access(testDescription: "int of null") { _ = try $0.int(4) },
      Access(testDescription: "optionalInt of real") { _ = try $0.optionalInt(1) },
      Access(testDescription: "value past the end") { _ = try $0.value(5) },
      Access(testDescription: "negative index") { _ = try $0.isNull(-1) },
    ])
  func mismatches(_ access: Access) {
    let error = #expect(throws: StoreError.self) { try access.call(row) }
    #expect(error?.kind == .conversion)
  }
}
