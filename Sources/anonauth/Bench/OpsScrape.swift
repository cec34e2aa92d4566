import Foundation

/// Reads one value from the daemon's `/metrics` (plain HTTP on the ops port).
enum OpsScrape {
  static func metric(_ name: String, ops: String) -> Double? {
    guard let body = get(ops, "/metrics") else { return nil }
    for line in body.split(separator: "\n") where line.hasPrefix(name + " ") {
      return Double(line.dropFirst(name.count + 1))
    }
    return nil
  }

  static func get(_ address: String, _ path: String) -> String? {
    guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...])
    else { return nil }
    let host = String(address[..<colon])
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var sa = sockaddr_in()
    sa.sin_family = sa_family_t(AF_INET)
    sa.sin_port = port.bigEndian
    guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &sa.sin_addr) == 1 else { return nil }
    let rc = withUnsafePointer(to: &sa) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard rc == 0 else { return nil }
    let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = recv(fd, &buffer, buffer.count, 0)
      if n <= 0 { break }
      data.append(contentsOf: buffer[0..<n])
    }
    let text = String(decoding: data, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { return nil }
    return String(text[split.upperBound...])
  }
}
