@_spi(Fuzzing) import AnonAuthServer

/// The HTTP/2 server session (libnghttp2 under `HTTP2ServerConnection`, its dispatch and
/// limits): any bytes a peer sends after ALPN `h2` must end in answers or a closed
/// connection, never a trap, and leave no receive budget charged.
enum HTTP2Fuzz {
  static func run(_ data: [UInt8]) {
    HTTP2SessionFuzzing.run(data)
  }
}
