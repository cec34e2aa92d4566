import COpenSSL

/// OpenSSL's two-pass DER encoding, as its `i2d_*` functions are meant to be called:
/// `encode(nil)` says how long the encoding is, `encode(&cursor)` writes it into a buffer
/// that long. Nil when either pass fails or the two disagree.
func encodedDER(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8]? {
  let length = encode(nil)
  guard length > 0 else { return nil }
  var out = [UInt8](repeating: 0, count: Int(length))
  let written = out.withUnsafeMutableBufferPointer { buffer in
    var cursor = buffer.baseAddress
    return encode(&cursor)
  }
  return written == length ? out : nil
}

/// The other direction, as OpenSSL's `d2i_*` functions decode: `decode(&cursor, length)`
/// reads from the start of `der` and moves the cursor past what it used. Nil when it
/// fails or leaves bytes behind (trailing bytes after a value are refused, not ignored);
/// `free` releases a value decoded from a prefix only.
func decodedWholeDER(
  _ der: [UInt8], _ decode: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?,
  free: (OpaquePointer) -> Void
) -> OpaquePointer? {
  der.withUnsafeBufferPointer { buffer in
    var cursor = buffer.baseAddress
    guard let value = decode(&cursor, buffer.count) else { return nil }
    guard let cursor, let start = buffer.baseAddress, cursor - start == buffer.count else {
      free(value)
      return nil
    }
    return value
  }
}
