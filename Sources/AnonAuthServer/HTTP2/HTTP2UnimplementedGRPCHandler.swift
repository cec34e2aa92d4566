/// What gRPC streams get while no gRPC handler is installed (`ServerCore.makeGRPCHandler`
/// nil): a trailers-only answer, `grpc-status` 12 (UNIMPLEMENTED), as a gRPC server
/// answers a service it does not have. The request body is dropped.
final class HTTP2UnimplementedGRPCHandler: HTTP2StreamHandler {
  func streamOpened(_ stream: Int32, headers: [HTTP2Header], endStream: Bool, session: any HTTP2StreamSink) {
    session.sendHeaders(
      stream,
      [
        HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc"),
        HTTP2Header("grpc-status", "12"), HTTP2Header("grpc-message", "gRPC is not served here"),
      ], endStream: true)
  }

  func stream(
    _ stream: Int32, received bytes: UnsafeRawBufferPointer, endStream: Bool, session: any HTTP2StreamSink
  ) {}

  func streamClosed(_ stream: Int32, errorCode: UInt32, session: any HTTP2StreamSink) {}
}
