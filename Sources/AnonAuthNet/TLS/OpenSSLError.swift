import COpenSSL

/// OpenSSL's whole error queue, drained into one error so that no stale entry is left
/// behind to be blamed on a later call.
public struct OpenSSLError: Error, CustomStringConvertible, Sendable {
  public let operation: String
  /// Codes are `unsigned long` in OpenSSL 3: kept as UInt, never squeezed into Int32.
  public let codes: [UInt]
  public let messages: [String]

  public init(_ operation: String) {
    self.operation = operation
    var codes: [UInt] = []
    var messages: [String] = []
    while true {
      let code = ERR_get_error()
      if code == 0 { break }
      codes.append(UInt(code))
      var buf = [CChar](repeating: 0, count: 256)
      ERR_error_string_n(code, &buf, buf.count)
      messages.append(CString.decode(buf))
    }
    self.codes = codes
    self.messages = messages
  }

  public var description: String {
    messages.isEmpty ? "\(operation) failed" : "\(operation): \(messages.joined(separator: "; "))"
  }
}
