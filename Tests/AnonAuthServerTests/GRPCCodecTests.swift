import AnonAuthWire
import Foundation
import Testing

@testable import AnonAuthServer

/// The pieces of gRPC's wire format, one rule a test: `grpc-timeout`, the percent-encoded
/// `grpc-message`, the message deframer, `grpc-status-details-bin`, and what of the
/// request's header block becomes metadata.
@Suite struct GRPCCodecTests {
  // MARK: grpc-timeout

  @Test func everyTimeoutUnitIsRead() {
    #expect(GRPCTimeout.nanoseconds("2H") == 7_200_000_000_000)
    #expect(GRPCTimeout.nanoseconds("3M") == 180_000_000_000)
    #expect(GRPCTimeout.nanoseconds("5S") == 5_000_000_000)
    #expect(GRPCTimeout.nanoseconds("250m") == 250_000_000)
    #expect(GRPCTimeout.nanoseconds("7u") == 7_000)
    #expect(GRPCTimeout.nanoseconds("9n") == 9)
    #expect(GRPCTimeout.nanoseconds("0m") == 0)
  }

  @Test func aTimeoutHasOneToEightDigitsAndAUnit() {
    #expect(GRPCTimeout.nanoseconds("99999999m") == 99_999_999_000_000)
    #expect(GRPCTimeout.nanoseconds("123456789m") == nil)  // nine digits
    #expect(GRPCTimeout.nanoseconds("m") == nil)
    #expect(GRPCTimeout.nanoseconds("") == nil)
    #expect(GRPCTimeout.nanoseconds("10") == nil)  // no unit
    #expect(GRPCTimeout.nanoseconds("10s") == nil)  // seconds are "S"
    #expect(GRPCTimeout.nanoseconds("10x") == nil)
    #expect(GRPCTimeout.nanoseconds("+5S") == nil)
    #expect(GRPCTimeout.nanoseconds("-5S") == nil)
    #expect(GRPCTimeout.nanoseconds(" 5S") == nil)
    #expect(GRPCTimeout.nanoseconds("1.5S") == nil)
  }

  @Test func aTimeoutPast64BitsOfNanosecondsIsTheLongestOne() {
    #expect(GRPCTimeout.nanoseconds("99999999H") == UInt64.max)
  }

  @Test func aTimeoutBecomesWholeMillisecondsRoundedUpAtLeastOne() {
    #expect(GRPCTimeout.milliseconds(fromNanos: 250_000_000) == 250)
    #expect(GRPCTimeout.milliseconds(fromNanos: 250_000_001) == 251)
    #expect(GRPCTimeout.milliseconds(fromNanos: 1) == 1)
    // 0 would mean "the server's default" to ConnectionCalls.
    #expect(GRPCTimeout.milliseconds(fromNanos: 0) == 1)
    #expect(GRPCTimeout.milliseconds(fromNanos: UInt64.max) == UInt32.max)
  }

  // MARK: grpc-message

  @Test func printableASCIIGoesOutAsItIs() {
    #expect(GRPCMessageText.percentEncoded("the API key is not valid ~!") == "the API key is not valid ~!")
    #expect(GRPCMessageText.percentEncoded("") == "")
  }

  @Test func percentControlsAndNonASCIIAreEscapedByte() {
    #expect(GRPCMessageText.percentEncoded("100%") == "100%25")
    #expect(GRPCMessageText.percentEncoded("a\nb\tc") == "a%0Ab%09c")
    #expect(GRPCMessageText.percentEncoded("café") == "caf%C3%A9")
    #expect(GRPCMessageText.percentEncoded("\u{7f}") == "%7F")
    #expect(GRPCMessageText.percentEncoded("日") == "%E6%97%A5")
  }

  // MARK: messages

  static func feed(_ deframer: inout GRPCMessageDeframer, _ bytes: [UInt8]) throws -> [GRPCMessage] {
    try bytes.withUnsafeBytes { buffer throws(GRPCMessageDeframer.TooLarge) in try deframer.append(buffer) }
  }

  @Test func messagesAreCutFromTheirPrefixesWhateverTheChunks() throws {
    let body =
      GRPCMessageDeframer.frame([1, 2, 3]) + GRPCMessageDeframer.frame([]) + GRPCMessageDeframer.frame([9])
    let expected = [
      GRPCMessage(flags: 0, bytes: [1, 2, 3]), GRPCMessage(flags: 0, bytes: []),
      GRPCMessage(flags: 0, bytes: [9]),
    ]
    var whole = GRPCMessageDeframer(limit: 100)
    #expect(try Self.feed(&whole, body) == expected)
    #expect(!whole.isMidMessage)
    var byByte = GRPCMessageDeframer(limit: 100)
    var got: [GRPCMessage] = []
    for byte in body { got += try Self.feed(&byByte, [byte]) }
    #expect(got == expected)
  }

  @Test func aPartialMessageIsHeldUntilItsLastByte() throws {
    var deframer = GRPCMessageDeframer(limit: 100)
    #expect(try Self.feed(&deframer, [0, 0, 0]).isEmpty)
    #expect(deframer.isMidMessage)
    #expect(try Self.feed(&deframer, [0, 2, 7]).isEmpty)
    #expect(deframer.isMidMessage)
    #expect(try Self.feed(&deframer, [8]) == [GRPCMessage(flags: 0, bytes: [7, 8])])
    #expect(!deframer.isMidMessage)
  }

  @Test func anAnnouncedLengthIsNotReservedBeforeItsBytesArrive() throws {
    let length = 64 * 1024
    var deframer = GRPCMessageDeframer(limit: length)
    // A prefix alone: nothing of the 64 KiB announced is held yet.
    #expect(try Self.feed(&deframer, [0, 0, 1, 0, 0]).isEmpty)
    #expect(deframer.heldCapacity < 1024)
    // A few bytes: the buffer grows with them, not to the announced length.
    #expect(try Self.feed(&deframer, Array(repeating: 3, count: 100)).isEmpty)
    #expect(deframer.heldCapacity < 1024)
    // The rest: the message is whole, and the buffer never went past its length.
    var got: [GRPCMessage] = []
    for _ in 0..<(length - 100) / 1000 { got += try Self.feed(&deframer, Array(repeating: 3, count: 1000)) }
    got += try Self.feed(&deframer, Array(repeating: 3, count: (length - 100) % 1000))
    #expect(got == [GRPCMessage(flags: 0, bytes: Array(repeating: 3, count: length))])
  }

  @Test func aLengthOverTheLimitFailsAtItsPrefixBeforeAnyBodyByte() throws {
    var deframer = GRPCMessageDeframer(limit: 100)
    #expect(try Self.feed(&deframer, GRPCMessageDeframer.frame(Array(repeating: 1, count: 100))).count == 1)
    #expect(throws: GRPCMessageDeframer.TooLarge(length: 101, limit: 100)) {
      try Self.feed(&deframer, [0, 0, 0, 0, 101])
    }
    var huge = GRPCMessageDeframer(limit: 100)
    #expect(throws: GRPCMessageDeframer.TooLarge(length: 0xffff_ffff, limit: 100)) {
      try Self.feed(&huge, [0, 0xff, 0xff, 0xff, 0xff])
    }
  }

  @Test func theFlagByteIsKept() throws {
    var deframer = GRPCMessageDeframer(limit: 100)
    #expect(try Self.feed(&deframer, [1, 0, 0, 0, 1, 42]) == [GRPCMessage(flags: 1, bytes: [42])])
  }

  @Test func aResponseMessageIsFramedUncompressedWithABigEndianLength() {
    #expect(GRPCMessageDeframer.frame([7, 7]) == [0, 0, 0, 0, 2, 7, 7])
    #expect(GRPCMessageDeframer.frame(Array(repeating: 0, count: 0x1_0203)).prefix(5) == [0, 0, 1, 2, 3])
  }

  // MARK: grpc-status-details-bin

  /// The bytes Python's protobuf runtime writes for the same google.rpc.Status (Any packed
  /// with ErrorInfo{reason, domain "anonauth", metadata}).
  static let pythonStatusHex =
    "08081209736c6f7720646f776e1a6e0a28747970652e676f6f676c65617069732e636f6d2f676f6f676c652e727063"
    + "2e4572726f72496e666f12420a1b544f4f5f4d414e595f415454454d5054535f5452595f4c415445521208616e6f6e"
    + "617574681a190a1372657472795f61667465725f7365636f6e647312023330"

  static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  @Test func statusDetailsAreTheBytesProtobufWrites() {
    let error = RPCError(.tooManyAttempts, "slow down", details: ["retry_after_seconds": "30"])
    #expect(Self.hex(GRPCStatusDetails.status(for: error)) == Self.pythonStatusHex)
  }

  @Test func detailsMetadataIsWrittenSortedByKey() {
    let error = RPCError(.credentialAlreadyInUse, "", details: ["provider_id": "password", "email": "a@b.c"])
    let text = String(decoding: GRPCStatusDetails.status(for: error), as: UTF8.self)
    let email = text.range(of: "email")
    let provider = text.range(of: "provider_id")
    #expect(email != nil && provider != nil)
    if let email, let provider { #expect(email.lowerBound < provider.lowerBound) }
    #expect(!text.contains("in use"))  // an empty message is not written
  }

  @Test func theTrailerIsUnpaddedBase64() throws {
    let error = RPCError(.apiKeyInvalid, "the API key is not valid")
    let value = GRPCStatusDetails.headerValue(for: error)
    #expect(!value.hasSuffix("="))
    let padded = value + String(repeating: "=", count: (4 - value.count % 4) % 4)
    let decoded = try #require(Data(base64Encoded: padded))
    #expect(Array(decoded) == GRPCStatusDetails.status(for: error))
  }

  @Test func statusFieldsCarryDetailsOnlyForAnAnonAuthError() {
    let native = GRPCStatus(RPCError(.userNotFound, "no such user"))
    #expect(native.fields.map(\.name) == ["grpc-status", "grpc-message", "grpc-status-details-bin"])
    #expect(native.fields[0].value == "5")
    let own = GRPCStatus(.internalError, "100% wrong")
    #expect(own.fields == [HTTP2Header("grpc-status", "13"), HTTP2Header("grpc-message", "100%25 wrong")])
    #expect(GRPCStatus.ok.fields == [HTTP2Header("grpc-status", "0")])
  }

  // MARK: request headers

  @Test func metadataIsTheHeadersThatAreNotHTTP2sOrGRPCs() {
    let head = GRPCRequestHead(headers: [
      HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "https"),
      HTTP2Header(":path", "/anonauth.v1.AccountService/SignUp"), HTTP2Header(":authority", "localhost"),
      HTTP2Header("content-type", "application/grpc"), HTTP2Header("te", "trailers"),
      HTTP2Header("grpc-timeout", "5S"), HTTP2Header("grpc-accept-encoding", "identity,gzip"),
      HTTP2Header("user-agent", "grpc-python/1.85"), HTTP2Header("x-api-key", "key"),
      HTTP2Header("x-request-id", "r1"), HTTP2Header("x-end-user-ip", "192.0.2.7"),
      HTTP2Header("authorization", "Bearer admin"),
    ])
    #expect(head.method == "POST")
    #expect(head.path == "/anonauth.v1.AccountService/SignUp")
    #expect(head.timeoutNanos == 5_000_000_000)
    #expect(head.malformedTimeout == nil)
    #expect(!head.hasUnsupportedEncoding)
    #expect(
      head.metadata == [
        "user-agent": "grpc-python/1.85", "x-api-key": "key", "x-request-id": "r1",
        "x-end-user-ip": "192.0.2.7",
        "authorization": "Bearer admin",
      ])
  }

  @Test func aRepeatedKeyHasItsValuesJoinedWithCommas() {
    let head = GRPCRequestHead(headers: [
      HTTP2Header("x-end-user-ip", "a"), HTTP2Header("x-end-user-ip", "b"),
    ])
    #expect(head.metadata == ["x-end-user-ip": "a,b"])
    let ids = GRPCRequestHead(headers: [HTTP2Header("x-request-id", "r1"), HTTP2Header("x-request-id", "r2")])
    #expect(ids.requestID == ids.metadata["x-request-id"])
    #expect(GRPCRequestHead(headers: []).requestID == nil)
  }

  @Test func aTimeoutThatDoesNotParseIsKeptToBeRefused() {
    let head = GRPCRequestHead(headers: [HTTP2Header("grpc-timeout", "soon")])
    #expect(head.timeoutNanos == nil)
    #expect(head.malformedTimeout == "soon")
  }

  @Test func onlyIdentityIsASupportedEncoding() {
    #expect(!GRPCRequestHead(headers: []).hasUnsupportedEncoding)
    #expect(!GRPCRequestHead(headers: [HTTP2Header("grpc-encoding", "identity")]).hasUnsupportedEncoding)
    #expect(GRPCRequestHead(headers: [HTTP2Header("grpc-encoding", "gzip")]).hasUnsupportedEncoding)
    #expect(GRPCRequestHead(headers: [HTTP2Header("grpc-encoding", "deflate")]).hasUnsupportedEncoding)
  }
}
