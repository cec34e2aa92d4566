import COpenSSL
import CShims
import Synchronization

/// A node's cluster identity as OpenSSL contexts: one for the gateway that accepts the
/// other nodes (server) and one for this node's own connections to them (client). Both
/// speak TLS 1.3 only, present the node's certificate, and require the peer's, verified
/// against the cluster CA file.
///
/// Identity is the chain to the cluster CA, nothing else: no host name is checked (nodes
/// advertise addresses and pod names that the certificates need not list), so any holder
/// of a certificate the cluster CA signed is a member. That is why the CA's key belongs
/// off the nodes.
public final class ClusterTLSContext: @unchecked Sendable {
  // @unchecked Sendable is safe: both SSL_CTX are configured in init and only read after
  // (SSL_new), which OpenSSL documents as thread-safe for a context no one changes.
  let server: OpaquePointer
  let client: OpaquePointer
  /// SHA-256 of the certificate presented (hex), logged on start and reload.
  public let certificateSHA256: String

  /// - Throws: `DqliteError.io` naming the file OpenSSL could not use.
  public init(caFile: String, certificateFile: String, keyFile: String) throws(DqliteError) {
    let server = try Self.context(
      server: true, caFile: caFile, certificateFile: certificateFile, keyFile: keyFile)
    let client: OpaquePointer
    do {
      client = try Self.context(
        server: false, caFile: caFile, certificateFile: certificateFile, keyFile: keyFile)
    } catch {
      SSL_CTX_free(server)
      throw error
    }
    self.server = server
    self.client = client
    certificateSHA256 = Self.fingerprint(server)
  }

  deinit {
    SSL_CTX_free(server)
    SSL_CTX_free(client)
  }

  private static func context(
    server: Bool, caFile: String, certificateFile: String, keyFile: String
  ) throws(DqliteError) -> OpaquePointer {
    ERR_clear_error()
    guard let ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
      throw Self.error("SSL_CTX_new")
    }
    var ok = anonauth_ssl_ctx_set_min_proto(ctx, TLS1_3_VERSION) == 1
    ok = ok && anonauth_ssl_ctx_set_max_proto(ctx, TLS1_3_VERSION) == 1
    anonauth_ssl_ctx_harden(ctx)
    // No resumption: a resumed session would skip the certificate check, and a peer whose
    // CA was dropped by a reload must be checked again.
    _ = anonauth_ssl_ctx_set_session_cache_off(ctx)
    _ = SSL_CTX_set_num_tickets(ctx, 0)
    guard ok else {
      SSL_CTX_free(ctx)
      throw Self.error("TLS 1.3")
    }
    if SSL_CTX_use_certificate_chain_file(ctx, certificateFile) != 1 {
      SSL_CTX_free(ctx)
      throw Self.error("--cluster-cert-file \(certificateFile)")
    }
    if SSL_CTX_use_PrivateKey_file(ctx, keyFile, SSL_FILETYPE_PEM) != 1 {
      SSL_CTX_free(ctx)
      throw Self.error("--cluster-key-file \(keyFile)")
    }
    if SSL_CTX_check_private_key(ctx) != 1 {
      SSL_CTX_free(ctx)
      throw Self.error("--cluster-key-file \(keyFile) does not match --cluster-cert-file")
    }
    if SSL_CTX_load_verify_locations(ctx, caFile, nil) != 1 {
      SSL_CTX_free(ctx)
      throw Self.error("--cluster-ca-file \(caFile)")
    }
    if server, let names = SSL_load_client_CA_file(caFile) {
      SSL_CTX_set_client_CA_list(ctx, names)
    }
    // A peer without a certificate, or with one the CA did not sign (or expired), fails
    // the handshake, on both sides.
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
    return ctx
  }

  private static func fingerprint(_ ctx: OpaquePointer) -> String {
    guard let certificate = SSL_CTX_get0_certificate(ctx) else { return "" }
    var digest = [UInt8](repeating: 0, count: 64)
    var length: UInt32 = 0
    guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else { return "" }
    let hex = Array("0123456789abcdef")
    return String(digest.prefix(Int(length)).flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0xf)]] })
  }

  /// `what` and the first reason on OpenSSL's error queue, which it empties.
  static func error(_ what: String) -> DqliteError {
    let code = ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return .io("TLS: \(what)") }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return .io("TLS: \(what): \(reason)")
  }
}

/// The cluster identity in use, replaced whole on SIGHUP: connections made after a
/// reload use the new files; open ones keep the identity they were made with.
public final class ClusterTLSSlot: Sendable {
  private let current: Mutex<ClusterTLSContext>

  public init(_ context: ClusterTLSContext) {
    current = Mutex(context)
  }

  public var context: ClusterTLSContext { current.withLock { $0 } }

  public func replace(_ context: ClusterTLSContext) {
    current.withLock { $0 = context }
  }
}
