import Foundation

/// A minimal HTTP/1.1 GET over a plain socket, for the ops port.
enum OpsHTTP {
  struct Response {
    let status: Int
    let headers: String
    let body: String
  }

  static func get(_ address: String, _ path: String) async throws -> Response {
    try await raw(address, "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
  }

  /// Sends `request` as it is and reads until the server closes.
  static func raw(_ address: String, _ request: String) async throws -> Response {
    let parts = address.split(separator: ":")
    guard parts.count == 2, let port = UInt16(parts[1]) else { throw URLError(.badURL) }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var sa = sockaddr_in()
    sa.sin_family = sa_family_t(AF_INET)
    sa.sin_port = port.bigEndian
    inet_pton(AF_INET, String(parts[0]), &sa.sin_addr)
    let rc = withUnsafePointer(to: &sa) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard rc == 0 else { throw URLError(.cannotConnectToHost) }
    let bytes = Array(request.utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = recv(fd, &buffer, buffer.count, 0)
      if n <= 0 { break }
      data.append(contentsOf: buffer[0..<n])
    }
    let text = String(decoding: data, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { return Response(status: 0, headers: "", body: text) }
    let head = String(text[..<split.lowerBound])
    let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
    return Response(status: status, headers: head, body: String(text[split.upperBound...]))
  }
}
