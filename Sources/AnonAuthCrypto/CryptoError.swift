import COpenSSL

/// A failed OpenSSL operation, with OpenSSL's error queue drained into the message.
public struct CryptoError: Error, CustomStringConvertible, Sendable {
  public let operation: String
  public let detail: String

  public init(_ operation: String) {
    self.operation = operation
    var parts: [String] = []
    while true {
      let code = ERR_get_error()
      if code == 0 { break }
      var buf = [CChar](repeating: 0, count: 256)
      ERR_error_string_n(code, &buf, buf.count)
      parts.append(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    self.detail = parts.joined(separator: "; ")
  }

  /// A failure whose reason is known without OpenSSL's queue (which is still drained, so
  /// that it holds nothing of this failure for the next error): "AES-GCM open:
  /// authentication failed", not "AES-GCM open: authentication failed failed".
  public init(_ operation: String, reason: String) {
    let drained = CryptoError(operation)
    self.operation = operation
    self.detail = drained.detail.isEmpty ? reason : "\(reason) (\(drained.detail))"
  }

  public var description: String { detail.isEmpty ? "\(operation) failed" : "\(operation): \(detail)" }
}
