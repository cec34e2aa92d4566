import COpenSSL
import CShims

/// An OpenSSL SSL_CTX set up the one way AnonAuth speaks TLS (docs/protocol.md §1):
/// TLS 1.2 minimum (1.3 preferred by OpenSSL's default order), on 1.2 only ECDHE with
/// AEAD ciphers, no renegotiation, no compression, ALPN `anonauth/1`, `h2` or `http/1.1` (the
/// server chooses, in `serverProtocols` order), and buffers released while a connection
/// is idle.
public final class TLSContext: @unchecked Sendable {
  // @unchecked Sendable is safe: the SSL_CTX is configured in init and only read after
  // (SSL_new), which OpenSSL documents as thread-safe for a context that is not changed.
  let ctx: OpaquePointer
  public let isServer: Bool

  /// AnonAuth's native framing: what AnonAuth's own clients offer.
  public static let alpn = "anonauth/1"
  /// HTTP/1.1 with the Firebase-compatible JSON API on the same port.
  public static let http11 = "http/1.1"
  /// HTTP/2: gRPC, and the same JSON API (docs/protocol.md §1).
  public static let h2 = "h2"

  /// What a server accepts, in its order of preference: the first of these the client
  /// offers is chosen, whatever the client's order: a client offering both `h2` and
  /// `http/1.1` (curl, URLSession) gets HTTP/2.
  public static let serverProtocols = [alpn, h2, http11]

  /// `protocols` in ALPN wire format: each name prefixed by its length.
  static func alpnWire(_ protocols: [String]) throws(OpenSSLError) -> [UInt8] {
    var wire: [UInt8] = []
    for name in protocols {
      guard (1...255).contains(name.utf8.count) else { throw OpenSSLError("ALPN length") }
      wire.append(UInt8(name.utf8.count))
      wire.append(contentsOf: name.utf8)
    }
    return wire
  }

  /// The TLS 1.2 cipher suites allowed, in order of preference: forward secret (ECDHE)
  /// and authenticated encryption (GCM, ChaCha20-Poly1305) only, Mozilla's intermediate
  /// set without the finite-field DHE suites. No CBC, no SHA-1 MACs, no static RSA key
  /// exchange. TLS 1.3 suites are all AEAD and keep OpenSSL's defaults.
  public static let tls12CipherSuites = [
    "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
  ].joined(separator: ":")

  /// Names this service's sessions: OpenSSL refuses to resume a session (with an
  /// `internal_error` alert) when client certificates are verified and none is set.
  static let sessionIDContext = Array("anonauth".utf8)

  private init(server: Bool) throws(OpenSSLError) {
    ERR_clear_error()
    guard let ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
      throw OpenSSLError("SSL_CTX_new")
    }
    self.ctx = ctx
    self.isServer = server
    _ = anonauth_ssl_ctx_set_min_proto(ctx, TLS1_2_VERSION)
    anonauth_ssl_ctx_harden(ctx)
    guard SSL_CTX_set_cipher_list(ctx, Self.tls12CipherSuites) == 1 else {
      throw OpenSSLError("TLS 1.2 cipher suites")  // deinit frees the context
    }
    if server {
      let id = Self.sessionIDContext
      guard SSL_CTX_set_session_id_context(ctx, id, UInt32(id.count)) == 1 else {
        throw OpenSSLError("TLS session id context")
      }
    }
  }

  deinit { SSL_CTX_free(ctx) }

  /// A server context from PEM files: the certificate chain and its private key.
  /// - Throws: `OpenSSLError` naming the file that could not be used.
  /// - Parameter clientCAFile: CAs of service callers' client certificates (mutual TLS).
  ///   A client may still connect without a certificate; one that presents a certificate
  ///   these CAs did not issue fails the handshake.
  public static func server(
    certificateChainFile: String, privateKeyFile: String, clientCAFile: String? = nil
  ) throws(OpenSSLError) -> TLSContext {
    let context = try TLSContext(server: true)
    ERR_clear_error()
    if SSL_CTX_use_certificate_chain_file(context.ctx, certificateChainFile) != 1 {
      throw OpenSSLError("TLS certificate \(certificateChainFile)")
    }
    if SSL_CTX_use_PrivateKey_file(context.ctx, privateKeyFile, SSL_FILETYPE_PEM) != 1 {
      throw OpenSSLError("TLS private key \(privateKeyFile)")
    }
    if SSL_CTX_check_private_key(context.ctx) != 1 {
      throw OpenSSLError("TLS key does not match certificate")
    }
    let protocols = try alpnWire(serverProtocols)
    guard anonauth_ssl_ctx_select_alpn(context.ctx, protocols, UInt32(protocols.count)) == 1 else {
      throw OpenSSLError("ALPN")
    }
    if let clientCAFile {
      guard SSL_CTX_load_verify_locations(context.ctx, clientCAFile, nil) == 1,
        let names = SSL_load_client_CA_file(clientCAFile)
      else { throw OpenSSLError("client CA file \(clientCAFile)") }
      SSL_CTX_set_client_CA_list(context.ctx, names)
      SSL_CTX_set_verify(context.ctx, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, nil)
    }
    return context
  }

  /// The SHA-256 fingerprint of the certificate a server context presents, as lowercase
  /// hex (what `openssl x509 -fingerprint -sha256` shows, without colons); nil when there
  /// is none. Logged on start and on each reload, so an operator can tell which
  /// certificate is live.
  public var certificateSHA256: String? {
    guard let certificate = SSL_CTX_get0_certificate(ctx) else { return nil }
    var digest = [UInt8](repeating: 0, count: 64)
    var length: UInt32 = 0
    guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else { return nil }
    let hex = Array("0123456789abcdef")
    return String(digest.prefix(Int(length)).flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0xf)]] })
  }

  /// A client context that verifies the server against `caFile` (nil: the system's CA
  /// store), or, with `insecure`, verifies nothing (development only: anyone can
  /// impersonate the server).
  /// - Parameter applicationProtocol: the one ALPN protocol offered: `anonauth/1` for
  ///   AnonAuth, `http/1.1` for the outbound HTTPS client.
  public static func client(
    caFile: String?, insecure: Bool = false, applicationProtocol: String = TLSContext.alpn
  ) throws(OpenSSLError) -> TLSContext {
    let context = try TLSContext(server: false)
    ERR_clear_error()
    if insecure {
      SSL_CTX_set_verify(context.ctx, SSL_VERIFY_NONE, nil)
    } else {
      if let caFile {
        if SSL_CTX_load_verify_locations(context.ctx, caFile, nil) != 1 {
          throw OpenSSLError("CA file \(caFile)")
        }
      } else if SSL_CTX_set_default_verify_paths(context.ctx) != 1 {
        throw OpenSSLError("default CA paths")
      }
      SSL_CTX_set_verify(context.ctx, SSL_VERIFY_PEER, nil)
    }
    var wire = try alpnWire([applicationProtocol])
    // SSL_CTX_set_alpn_protos returns 0 on success, unlike most of OpenSSL.
    if SSL_CTX_set_alpn_protos(context.ctx, &wire, UInt32(wire.count)) != 0 {
      throw OpenSSLError("ALPN")
    }
    return context
  }
}
