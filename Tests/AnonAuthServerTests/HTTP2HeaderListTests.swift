import CNghttp2
import Testing

@testable import AnonAuthServer

/// The response header block handed to libnghttp2 (`withHeaderList`) and the request
/// header names matched by bytes (`GRPCRequestHead`): what the fast paths must keep
/// exactly as the plain ones had it.
@Suite struct HTTP2HeaderListTests {
  /// Every name and value as the nghttp2_nv array carries it, with its flags.
  private func listed(_ headers: [HTTP2Header]) -> [(String, String, UInt8)] {
    withHeaderList(headers) { list, count in
      guard let list else { return [] }
      return (0..<count).map { index in
        let field = list[index]
        return (
          String(decoding: UnsafeBufferPointer(start: field.name, count: field.namelen), as: UTF8.self),
          String(decoding: UnsafeBufferPointer(start: field.value, count: field.valuelen), as: UTF8.self),
          field.flags
        )
      }
    }
  }

  @Test func everyFieldIsCopiedWithItsBytes() {
    let headers = [
      HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc"),
      HTTP2Header("x-long", String(repeating: "v", count: 3000)), HTTP2Header("empty", ""),
      HTTP2Header("grpc-message", "caf%C3%A9 \u{e9}"),
    ]
    let fields = listed(headers)
    #expect(fields.map(\.0) == headers.map(\.name))
    #expect(fields.map(\.1) == headers.map(\.value))
    #expect(listed([]).isEmpty)
  }

  /// Values that change on every call go out never indexed, so they do not fill the
  /// encoder's dynamic table (and are not inserted and evicted once a call); fixed ones
  /// stay indexable.
  @Test func perCallValuesAreNeverIndexed() {
    let fields = listed([
      HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc"),
      HTTP2Header("x-request-id", "0f3c"), HTTP2Header("grpc-status", "5"),
      HTTP2Header("grpc-message", "no such user"), HTTP2Header("grpc-status-details-bin", "CAU"),
    ])
    let never = UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue)
    #expect(
      fields.filter { $0.2 & never != 0 }.map(\.0) == [
        "x-request-id", "grpc-message", "grpc-status-details-bin",
      ])
  }

  @Test func reservedNamesAreTheOnesOfHTTP() {
    for name in [
      "content-type", "te", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
      "host",
      "content-length",
    ] {
      #expect(GRPCRequestHead.isReserved(name), "\(name)")
    }
    for name in [
      "x-api-key", "user-agent", "authorization", "tf", "hosts", "content-typ", "x-request-id", "",
    ] {
      #expect(!GRPCRequestHead.isReserved(name), "\(name)")
    }
  }

  @Test func grpcNamesAreMatchedByTheirPrefix() {
    #expect(GRPCRequestHead.isGRPCName("grpc-timeout"))
    #expect(GRPCRequestHead.isGRPCName("grpc-"))
    #expect(GRPCRequestHead.isGRPCName("grpc-accept-encoding"))
    for name in ["grpc", "grpc_x", "gRPC-x", "x-grpc-y", "g", ""] {
      #expect(!GRPCRequestHead.isGRPCName(name), "\(name)")
    }
    let head = GRPCRequestHead(headers: [
      HTTP2Header("grpc-", "dropped"), HTTP2Header("grpc-trace-bin", "dropped"), HTTP2Header("grpcx", "kept"),
    ])
    #expect(head.metadata == ["grpcx": "kept"])
  }
}
