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
