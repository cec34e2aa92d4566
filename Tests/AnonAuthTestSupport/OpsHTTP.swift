import Foundation
import Glibc

/// A minimal HTTP/1.1 GET over a plain socket, for the ops port (and any listener a test
/// wants one request from, the connection closed after it).
public enum OpsHTTP {
  public struct Response: Sendable {
    public let status: Int
    /// The status line and the header lines, as sent.
    public let headers: String
    public let body: String
  }

  public static func get(_ address: String, _ path: String) async throws -> Response {
    try await raw(address, "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
  }

  /// Sends `request` as it is and reads until the server closes.
  public static func raw(_ address: String, _ request: String) async throws -> Response {
    let fd = try LoopbackSocket.connect(address)
    defer { close(fd) }
    let bytes = Array(request.utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    let text = String(decoding: LoopbackSocket.readToEnd(fd), as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { return Response(status: 0, headers: "", body: text) }
    let head = String(text[..<split.lowerBound])
    let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
    return Response(status: status, headers: head, body: String(text[split.upperBound...]))
  }
}
