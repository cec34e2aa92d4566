import AnonAuthTestSupport
import COpenSSL
import Foundation
import Glibc

/// A blocking TLS client for tests that need to choose the ALPN list and send raw
/// HTTP/1.1 over one connection (keep-alive), which neither the RPC client nor the
/// outbound HTTPS client does. Verifies the server against `caFile` as `localhost`.
final class BlockingTLSClient {
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  typealias Response = TestHTTPResponse

  private let context: OpaquePointer
  private let ssl: OpaquePointer
  private let fd: Int32
  private var framer = HTTPResponseFramer()

  init(address: String, caFile: String, alpn: [String]) throws {
    guard let context = SSL_CTX_new(TLS_client_method()) else { throw Failure(description: "SSL_CTX_new") }
    self.context = context
    guard let ssl = SSL_new(context) else {
      SSL_CTX_free(context)
      throw Failure(description: "SSL_new")
    }
    self.ssl = ssl
    do {
      fd = try LoopbackSocket.connect(address, receiveTimeout: 20)
    } catch {
      SSL_free(ssl)
      SSL_CTX_free(context)
      throw error
    }
    guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
      throw Failure(description: "CA file")
    }
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
    var wire: [UInt8] = []
    for name in alpn { wire += [UInt8(name.utf8.count)] + Array(name.utf8) }
    guard SSL_set_alpn_protos(ssl, &wire, UInt32(wire.count)) == 0 else { throw Failure(description: "ALPN") }
    SSL_set1_host(ssl, "localhost")
    SSL_set_fd(ssl, fd)
    guard SSL_connect(ssl) == 1 else { throw Failure(description: "TLS handshake") }
  }

  deinit {
    SSL_free(ssl)
    SSL_CTX_free(context)
    close(fd)
  }

  /// The protocol the server chose, or nil.
  var selectedProtocol: String? {
    var data: UnsafePointer<UInt8>?
    var length: UInt32 = 0
    SSL_get0_alpn_selected(ssl, &data, &length)
    guard let data, length > 0 else { return nil }
    return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
  }

  func send(_ text: String) throws {
    let bytes = Array(text.utf8)
    guard SSL_write(ssl, bytes, Int32(bytes.count)) == Int32(bytes.count) else {
      throw Failure(description: "TLS write")
    }
  }

  /// Reads one response framed by its `Content-Length`.
  func response() throws -> Response {
    try framer.next { try fill() }
  }

  private func fill() throws -> ArraySlice<UInt8> {
    var chunk = [UInt8](repeating: 0, count: 16384)
    let n = SSL_read(ssl, &chunk, Int32(chunk.count))
    guard n > 0 else { throw Failure(description: "closed") }
    return chunk[0..<Int(n)]
  }
}
