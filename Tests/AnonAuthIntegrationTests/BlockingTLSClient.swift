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

  struct Response {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]
  }

  private let context: OpaquePointer
  private let ssl: OpaquePointer
  private let fd: Int32
  private var buffer: [UInt8] = []

  init(address: String, caFile: String, alpn: [String]) throws {
    let parts = address.split(separator: ":")
    guard parts.count == 2, let port = UInt16(parts[1]) else {
      throw Failure(description: "address \(address)")
    }
    guard let context = SSL_CTX_new(TLS_client_method()) else { throw Failure(description: "SSL_CTX_new") }
    self.context = context
    guard let ssl = SSL_new(context) else {
      SSL_CTX_free(context)
      throw Failure(description: "SSL_new")
    }
    self.ssl = ssl
    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var timeout = timeval(tv_sec: 20, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
      throw Failure(description: "CA file")
    }
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
    var wire: [UInt8] = []
    for name in alpn { wire += [UInt8(name.utf8.count)] + Array(name.utf8) }
    guard SSL_set_alpn_protos(ssl, &wire, UInt32(wire.count)) == 0 else { throw Failure(description: "ALPN") }
    SSL_set1_host(ssl, "localhost")
    var sa = sockaddr_in()
    sa.sin_family = sa_family_t(AF_INET)
    sa.sin_port = port.bigEndian
    inet_pton(AF_INET, String(parts[0]), &sa.sin_addr)
    let rc = withUnsafePointer(to: &sa) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard rc == 0 else { throw Failure(description: "connect \(address)") }
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
    let blank = Array("\r\n\r\n".utf8)
    var end: Int?
    while true {
      if buffer.count >= 4 {
        end = (0...(buffer.count - 4)).first { Array(buffer[$0..<($0 + 4)]) == blank }
        if end != nil { break }
      }
      try fill()
    }
    guard let end else { throw Failure(description: "no head") }
    let lines = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let status = Int(lines[0].split(separator: " ")[1]) ?? 0
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    buffer.removeFirst(end + 4)
    let length = Int(headers["content-length"] ?? "0") ?? 0
    while buffer.count < length { try fill() }
    let body = Array(buffer[0..<length])
    buffer.removeFirst(length)
    return Response(status: status, headers: headers, body: body)
  }

  private func fill() throws {
    var chunk = [UInt8](repeating: 0, count: 16384)
    let n = SSL_read(ssl, &chunk, Int32(chunk.count))
    guard n > 0 else { throw Failure(description: "closed") }
    buffer += chunk[0..<Int(n)]
  }
}
