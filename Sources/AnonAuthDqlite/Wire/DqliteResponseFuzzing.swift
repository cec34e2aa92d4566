/// The client's decoding of one node's response, header and body, exposed for the
/// `dqlite` fuzz target: a broken or hostile node (or anything that answers on a node's
/// address) reaches exactly these decoders, and each must fail with `DqliteError`, never
/// trap or read out of bounds.
public enum DqliteResponseFuzzing {
  /// Decodes `message` (an 8-byte header, then the body) the way the client reads it,
  /// then runs every body decoder over the body whatever the header's type says.
  public static func decode(_ message: [UInt8]) {
    guard message.count >= 8,
      let header = try? DqliteHeader(Array(message[0..<8]), maxBodyBytes: DqliteHeader.maxBodyBytes)
    else { return }
    let body = Array(message[8...].prefix(header.bodyBytes))
    if let type = DqliteResponseType(rawValue: header.type) {
      _ = try? DqliteResponse.check(header, body, expect: type)
    }
    _ = DqliteResponse.failure(body)
    _ = try? DqliteResponse.server(body)
    _ = try? DqliteResponse.servers(body)
    _ = try? DqliteResponse.database(body)
    _ = try? DqliteResponse.statement(body)
    _ = try? DqliteResponse.result(body)
    _ = try? DqliteResponse.rows(body)
    _ = try? DqliteResponse.files(body)
  }
}
