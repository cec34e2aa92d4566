import COpenSSL
import CShims
import Glibc

/// OpenSSL's TLS records on the descriptor: `SSL_read`, `SSL_write` and the handshake,
/// with OpenSSL's own buffers released while idle (`SSL_MODE_RELEASE_BUFFERS`, set on
/// the context).
final class TLSRecords: RecordLayer {
  private let fd: Int32
  private var ssl: OpaquePointer?

  /// - Parameter serverName: for clients, the name or IP the certificate must match.
  init(fd: Int32, context: TLSContext, serverName: String?) throws(OpenSSLError) {
    self.fd = fd
    ERR_clear_error()
    guard let ssl = SSL_new(context.ctx) else { throw OpenSSLError("SSL_new") }
    self.ssl = ssl
    SSL_set_fd(ssl, fd)
    if context.isServer {
      SSL_set_accept_state(ssl)
    } else {
      SSL_set_connect_state(ssl)
      if let serverName {
        var probe = in6_addr()
        let isIP =
          inet_pton(AF_INET, serverName, &probe) == 1 || inet_pton(AF_INET6, serverName, &probe) == 1
        if isIP {
          X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName)
        } else {
          _ = anonauth_ssl_set_tlsext_host_name(ssl, serverName)
          SSL_set1_host(ssl, serverName)
        }
      }
    }
  }

  deinit { release() }

  var needsHandshake: Bool { true }

  func handshake() -> RecordIO {
    guard let ssl else { return .closed }
    ERR_clear_error()
    let rc = SSL_do_handshake(ssl)
    if rc == 1 {
      readVerifiedPeerName()
      return .transferred(0)
    }
    return outcome(rc, "TLS handshake")
  }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> RecordIO {
    guard let ssl else { return .closed }
    ERR_clear_error()
    let n = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
    return n > 0 ? .transferred(Int(n)) : outcome(n, "TLS read")
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> RecordIO {
    guard let ssl else { return .closed }
    ERR_clear_error()
    let n = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
    return n > 0 ? .transferred(Int(n)) : outcome(n, "TLS write")
  }

  var hasBufferedInput: Bool { ssl.map { SSL_has_pending($0) == 1 } ?? false }

  private func outcome(_ rc: Int32, _ operation: String) -> RecordIO {
    guard let ssl else { return .closed }
    switch SSL_get_error(ssl, rc) {
    case SSL_ERROR_WANT_READ: return .wantRead
    case SSL_ERROR_WANT_WRITE: return .wantWrite
    case SSL_ERROR_ZERO_RETURN: return .closed
    default: return .failed(OpenSSLError(operation))
    }
  }

  func shutdownWrite() {
    if let ssl {
      ERR_clear_error()
      _ = SSL_shutdown(ssl)
      ERR_clear_error()
    }
    _ = Glibc.shutdown(fd, Int32(SHUT_WR))
  }

  var negotiatedProtocol: String? {
    guard let ssl else { return nil }
    var data: UnsafePointer<UInt8>?
    var len: UInt32 = 0
    anonauth_ssl_get_alpn(ssl, &data, &len)
    guard let data, len > 0 else { return nil }
    return String(decoding: UnsafeBufferPointer(start: data, count: Int(len)), as: UTF8.self)
  }

  private(set) var verifiedPeerName: String?

  /// The common name of the client certificate the server's client CAs verified.
  private func readVerifiedPeerName() {
    guard let ssl, SSL_get_verify_result(ssl) == X509_V_OK,
      let certificate = SSL_get0_peer_certificate(ssl), let subject = X509_get_subject_name(certificate)
    else { return }
    var buffer = [CChar](repeating: 0, count: 256)
    let length = X509_NAME_get_text_by_NID(subject, NID_commonName, &buffer, Int32(buffer.count))
    verifiedPeerName = length > 0 ? CString.decode(buffer) : ""
  }

  func release() {
    if let ssl {
      SSL_free(ssl)
      self.ssl = nil
    }
    ERR_clear_error()
  }
}
