import AnonAuthWire
import Foundation
import Testing

@testable import AnonAuthRPCClient

/// The gRPC client's pieces that need no server: the message prefix, the reader that
/// takes a unary reply apart, `grpc-timeout`, `grpc-message`'s percent-encoding, the
/// reason read back from `grpc-status-details-bin`, and the request's header block.
@Suite struct GRPCClientFramingTests {
  // MARK: Messages

  @Test func aMessageGetsAnUncompressedFlagAndABigEndianLength() {
    let framed = GRPCMessageFrame.encode(Array(repeating: 7, count: 0x0102))
    #expect(Array(framed.prefix(5)) == [0, 0, 0, 0x01, 0x02])
    #expect(framed.count == 5 + 0x0102)
    #expect(GRPCMessageFrame.encode([]) == [0, 0, 0, 0, 0])
  }

  @Test func aReplySplitAcrossDataFramesReadsBackWhole() throws {
    let message: [UInt8] = Array(0..<200).map { UInt8($0) }
    let framed = GRPCMessageFrame.encode(message)
    var reader = GRPCMessageReader(maxMessageSize: 1024)
    // One byte, then the rest of the prefix, then the body in two pieces.
    for range in [0..<1, 1..<5, 5..<50, 50..<framed.count] {
      framed[range].withUnsafeBytes { reader.append($0) }
    }
    #expect(try reader.message() == message)
  }

  @Test func anEmptyMessageIsAMessage() throws {
    var reader = GRPCMessageReader(maxMessageSize: 16)
    GRPCMessageFrame.encode([]).withUnsafeBytes { reader.append($0) }
    #expect(try reader.message() == [])
  }

  @Test func brokenBodiesAreErrorsNotTraps() {
    func read(_ bytes: [UInt8], max: Int = 64) -> GRPCMessageReader.Failure? {
      var reader = GRPCMessageReader(maxMessageSize: max)
      bytes.withUnsafeBytes { reader.append($0) }
      do {
        _ = try reader.message()
        return nil
      } catch {
        return error
      }
    }
    #expect(read([]) == .missing)
    #expect(read([0, 0, 0]) == .truncated)
    #expect(read([0, 0, 0, 0, 4, 1, 2]) == .truncated)
    #expect(read([0, 0, 0, 0, 1, 9, 0, 0, 0, 0, 0]) == .extra)
    #expect(read([1, 0, 0, 0, 1, 9]) == .compressed)
    #expect(read([2, 0, 0, 0, 1, 9]) == .badFlag(2))
    // The declared length alone is refused, before the message arrives.
    #expect(read([0, 0xff, 0xff, 0xff, 0xff]) == .tooLarge(0xffff_ffff))
    #expect(read([0, 0, 0, 0, 65], max: 64) == .tooLarge(65))
  }

  /// The server's rule for requests (docs/protocol.md §12), on the client's side too:
  /// every message's length is judged from its prefix, before its flag and its bytes, so
  /// a second message cannot make the client buffer past the limit.
  @Test func everyPrefixIsJudgedByItsLengthFirst() {
    var reader = GRPCMessageReader(maxMessageSize: 64)
    ([0, 0, 0, 0, 1, 9] + [0, 0xff, 0xff, 0xff, 0xff] as [UInt8]).withUnsafeBytes { reader.append($0) }
    #expect(throws: GRPCMessageReader.Failure.tooLarge(0xffff_ffff)) { try reader.message() }
    var compressed = GRPCMessageReader(maxMessageSize: 64)
    [UInt8]([1, 0, 0, 0, 65]).withUnsafeBytes { compressed.append($0) }
    #expect(throws: GRPCMessageReader.Failure.tooLarge(65)) { try compressed.message() }
    var tail = GRPCMessageReader(maxMessageSize: 64)
    [UInt8]([0, 0, 0, 0, 1, 9, 0, 0]).withUnsafeBytes { tail.append($0) }
    #expect(throws: GRPCMessageReader.Failure.extra) { try tail.message() }
  }

  // MARK: Headers

  @Test func theTimeoutFitsEightDigits() {
    #expect(GRPCTimeout.header(milliseconds: 0) == "0m")
    #expect(GRPCTimeout.header(milliseconds: 5000) == "5000m")
    #expect(GRPCTimeout.header(milliseconds: 99_999_999) == "99999999m")
    #expect(GRPCTimeout.header(milliseconds: 100_000_001) == "100001S")
    #expect(GRPCTimeout.header(milliseconds: .max) == "4294968S")
  }

  @Test func grpcMessageIsPercentDecodedLeniently() {
    #expect(GRPCPercentEncoding.decode("a%20b%25c".utf8) == "a b%c")
    #expect(GRPCPercentEncoding.decode("%E2%9C%93 done".utf8) == "\u{2713} done")
    #expect(GRPCPercentEncoding.decode("100%".utf8) == "100%")
    #expect(GRPCPercentEncoding.decode("%zz%4".utf8) == "%zz%4")
  }

  @Test func theRequestCarriesPseudoHeadersFirstAndNoReservedMetadata() {
    let headers = GRPCRequestHeaders.make(
      path: "/anonauth.v1.HealthService/Check", authority: "localhost:7443", timeoutMs: 1500,
      metadata: [
        "X-API-Key": "k", "content-type": "text/plain", ":path": "/evil", "te": "gzip", "Connection": "close",
      ])
    let names = headers.map(\.name)
    #expect(Array(names.prefix(4)) == [":method", ":scheme", ":path", ":authority"])
    #expect(names.filter { $0 == ":path" }.count == 1)
    #expect(names.filter { $0 == "content-type" }.count == 1)
    #expect(names.filter { $0 == "te" }.count == 1)
    #expect(!names.contains("connection"))
    let values = Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    #expect(values[":path"] == "/anonauth.v1.HealthService/Check")
    #expect(values["content-type"] == "application/grpc")
    #expect(values["te"] == "trailers")
    #expect(values["grpc-timeout"] == "1500m")
    #expect(values["x-api-key"] == "k")
  }

  // MARK: Status

  /// `google.rpc.Status{code, message, details: [Any(ErrorInfo{reason, domain, metadata})]}`
  /// encoded by hand, as a server would send it.
  static func statusBytes(code: UInt8, reason: String, metadata: [(String, String)]) -> [UInt8] {
    func field(_ number: UInt8, _ bytes: [UInt8]) -> [UInt8] {
      precondition(bytes.count < 128)
      return [number << 3 | 2, UInt8(bytes.count)] + bytes
    }
    var info = field(1, Array(reason.utf8)) + field(2, Array("anonauth.dev".utf8))
    for (key, value) in metadata { info += field(3, field(1, Array(key.utf8)) + field(2, Array(value.utf8))) }
    let any = field(1, Array("type.googleapis.com/google.rpc.ErrorInfo".utf8)) + field(2, info)
    return [1 << 3, code] + field(2, Array("slow down".utf8)) + field(3, any)
  }

  @Test func theReasonAndDetailsComeBackFromStatusDetailsWithOrWithoutPadding() throws {
    let bytes = Self.statusBytes(code: 8, reason: "QUOTA_EXCEEDED", metadata: [("retry_after_ms", "1000")])
    let padded = Data(bytes).base64EncodedString()
    for text in [padded, String(padded.prefix { $0 != "=" })] {
      let decoded = try #require(GRPCStatusDetails.decode(header: text.utf8))
      #expect(decoded.code == 8)
      #expect(decoded.message == "slow down")
      #expect(decoded.reason == "QUOTA_EXCEEDED")
      #expect(decoded.details == ["retry_after_ms": "1000"])
    }
    #expect(GRPCStatusDetails.decode(header: "not base64!".utf8) == nil)
    // Base64 of a truncated message.
    let cut = Data(bytes.prefix(bytes.count - 3)).base64EncodedString()
    #expect(GRPCStatusDetails.decode(header: cut.utf8) == nil)
  }

  @Test func trailersBecomeTheSameRPCErrorTheNativeTransportGives() {
    let details = Data(
      Self.statusBytes(code: 16, reason: "INVALID_ID_TOKEN", metadata: [("field", "id_token")])
    )
    .base64EncodedString()
    let fields = [
      ":status": "200", "grpc-status": "16", "grpc-message": "token%20expired",
      "grpc-status-details-bin": details,
    ]
    let result = GRPCCallOutcome.result(fields: fields, body: GRPCMessageReader(maxMessageSize: 16))
    #expect(
      result
        == .failure(
          RPCError(
            code: .unauthenticated, reason: "INVALID_ID_TOKEN", message: "token expired",
            details: ["field": "id_token"])))
    // Without details the code's name stands in for the reason.
    let bare = GRPCCallOutcome.result(
      fields: [":status": "200", "grpc-status": "12"], body: GRPCMessageReader(maxMessageSize: 16))
    #expect(bare == .failure(RPCError(code: .unimplemented, reason: "UNIMPLEMENTED", message: "")))
    // No grpc-status at all: gRPC's mapping of the HTTP status.
    let http = GRPCCallOutcome.result(fields: [":status": "503"], body: GRPCMessageReader(maxMessageSize: 16))
    #expect((try? http.get()) == nil)
    if case .failure(let error) = http { #expect(error.code == .unavailable) }
  }

  @Test func anOKStatusYieldsTheMessage() {
    var body = GRPCMessageReader(maxMessageSize: 16)
    GRPCMessageFrame.encode([1, 2, 3]).withUnsafeBytes { body.append($0) }
    let result = GRPCCallOutcome.result(fields: [":status": "200", "grpc-status": "0"], body: body)
    #expect(result == .success([1, 2, 3]))
  }
}
