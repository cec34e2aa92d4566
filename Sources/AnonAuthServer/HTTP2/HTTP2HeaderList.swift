import CNghttp2

/// Runs `body` with `headers` as libnghttp2's name/value array; nghttp2 copies them.
/// Names and values go into one buffer and the array beside it, both on the stack when
/// small (withUnsafeTemporaryAllocation): a response's few hundred bytes of header
/// block cost no allocation of their own.
func withHeaderList<R>(_ headers: [HTTP2Header], _ body: (UnsafeMutablePointer<nghttp2_nv>?, Int) -> R) -> R {
  var byteCount = 1  // a valid address even when every name and value is empty
  for header in headers { byteCount += header.name.utf8.count + header.value.utf8.count }
  return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: byteCount) { bytes in
    withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: max(1, headers.count)) { list in
      guard let base = bytes.baseAddress, let first = list.baseAddress else { return body(nil, 0) }
      var offset = 0
      func place(_ text: String) -> Int {
        var text = text
        text.withUTF8 { source in
          if let from = source.baseAddress {
            UnsafeMutableRawPointer(base + offset).copyMemory(from: from, byteCount: source.count)
          }
        }
        offset += text.utf8.count
        return text.utf8.count
      }
      for (index, header) in headers.enumerated() {
        let name = base + offset
        let nameCount = place(header.name)
        let value = base + offset
        let valueCount = place(header.value)
        let flags = HTTP2Header.isNeverIndexed(header.name) ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE
        (first + index).initialize(
          to: nghttp2_nv(
            name: name, value: value, namelen: nameCount, valuelen: valueCount, flags: UInt8(flags.rawValue)))
      }
      base[offset] = 0
      return body(first, headers.count)
    }
  }
}

extension HTTP2Header {
  /// Response fields whose values differ on every call: sent as literals never indexed
  /// (RFC 7541 §6.2.3), so each call does not insert into the encoder's dynamic table
  /// and evict from it (a malloc and a free in libnghttp2), and an idle connection's
  /// table does not stay filled with request ids.
  static func isNeverIndexed(_ name: String) -> Bool {
    switch name {
    case "x-request-id", "grpc-message", "grpc-status-details-bin", "date", "content-length": true
    default: false
    }
  }
}
