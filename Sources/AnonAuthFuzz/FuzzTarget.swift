import AnonAuthDqlite

/// One parser that hostile bytes can reach, as libFuzzer drives it and as `make test`
/// replays its corpus. Each target must return normally for every input: a trap, an
/// overflow or an AddressSanitizer report is a finding.
public enum FuzzTarget: String, CaseIterable, Sendable {
  /// The 4-byte length prefix and the `Frame` envelope, fed in pieces as sockets do.
  case frame
  /// Every request message a client can send, through the protobuf-c bridge.
  case requests
  /// The pre-scan before every decode: never traps, and bounds what it accepts.
  case prescan
  /// JWT decoding and RS256/ES256 verification.
  case jwt
  /// An identity provider's key set.
  case jwks
  /// The JSON reader under JWTs, key sets and custom claims.
  case json
  /// The ops port's HTTP request head.
  case opsHTTP = "ops-http"
  /// The outbound HTTPS client's response parser (identity providers' answers).
  case outboundHTTP = "outbound-http"
  /// The HTTP/1.1 transport's request parser (the RPC port's `http/1.1`, the emulator).
  case httpRequest = "http-request"
  /// The HTTP/2 server session (ALPN `h2`): frames, HPACK, streams and their limits.
  case http2
  /// The standard gRPC services' requests: server reflection and health.
  case grpcStandard = "grpc-standard"
  /// The HTTPS JSON API's request bodies (JSON or a form), for every endpoint.
  case firebaseJSON = "firebase-json"
  /// Stored password hashes.
  case phc
  /// The daemon's JSON configuration file.
  case config
  /// Firebase's password hash parameters: the console's block, JSON, and the sealed form.
  case hashConfig = "hash-config"
  /// A dqlite node's responses, as the replicated store's client decodes them.
  case dqlite
  /// A mail server's replies, as the SMTP client reads them.
  case smtpReply = "smtp-reply"

  /// Runs the target on one input.
  public func run(_ data: [UInt8]) {
    switch self {
    case .frame: FrameFuzz.run(data)
    case .requests: RequestsFuzz.run(data)
    case .prescan: PreScanFuzz.run(data)
    case .jwt: JWTFuzz.run(data)
    case .jwks: JWKSFuzz.run(data)
    case .json: JSONFuzz.run(data)
    case .opsHTTP: OpsHTTPFuzz.run(data)
    case .outboundHTTP: OutboundHTTPFuzz.run(data)
    case .httpRequest: HTTPRequestFuzz.run(data)
    case .http2: HTTP2Fuzz.run(data)
    case .grpcStandard: GRPCStandardFuzz.run(data)
    case .firebaseJSON: FirebaseJSONFuzz.run(data)
    case .phc: PHCFuzz.run(data)
    case .config: ConfigFuzz.run(data)
    case .hashConfig: HashConfigFuzz.run(data)
    case .dqlite: DqliteResponseFuzzing.decode(data)
    case .smtpReply: SMTPReplyFuzz.run(data)
    }
  }
}
