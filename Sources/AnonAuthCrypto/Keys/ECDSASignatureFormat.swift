import COpenSSL

/// JWS carries ES256 signatures as raw `r || s` (32 bytes each, RFC 7518 section 3.4);
/// OpenSSL speaks DER `ECDSA-Sig-Value`. These convert between the two.
enum ECDSASignatureFormat {
  static let componentSize = 32

  /// DER for a 64-byte raw signature; nil for any other length.
  static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
    guard raw.count == 2 * componentSize, let sig = ECDSA_SIG_new() else { return nil }
    defer { ECDSA_SIG_free(sig) }
    guard let r = BN_bin2bn(raw, Int32(componentSize), nil) else { return nil }
    let s: OpaquePointer? = raw.withUnsafeBufferPointer { buffer in
      buffer.baseAddress.flatMap { BN_bin2bn($0 + componentSize, Int32(componentSize), nil) }
    }
    guard let s else {
      BN_free(r)
      return nil
    }
    // On success the signature owns r and s; on failure they are still ours.
    guard ECDSA_SIG_set0(sig, r, s) == 1 else {
      BN_free(r)
      BN_free(s)
      return nil
    }
    return encodedDER { i2d_ECDSA_SIG(sig, $0) }
  }

  /// The 64-byte raw form of a DER signature; nil when it does not parse completely or a
  /// component is wider than 32 bytes.
  static func raw(fromDER der: [UInt8]) -> [UInt8]? {
    let sig = decodedWholeDER(der, { d2i_ECDSA_SIG(nil, $0, $1) }, free: { ECDSA_SIG_free($0) })
    guard let sig else { return nil }
    defer { ECDSA_SIG_free(sig) }
    var r: OpaquePointer?
    var s: OpaquePointer?
    ECDSA_SIG_get0(sig, &r, &s)
    guard let r, let s else { return nil }
    var out = [UInt8](repeating: 0, count: 2 * componentSize)
    let ok = out.withUnsafeMutableBufferPointer { buffer -> Bool in
      guard let base = buffer.baseAddress else { return false }
      return BN_bn2binpad(r, base, Int32(componentSize)) == componentSize
        && BN_bn2binpad(s, base + componentSize, Int32(componentSize)) == componentSize
    }
    return ok ? out : nil
  }
}
