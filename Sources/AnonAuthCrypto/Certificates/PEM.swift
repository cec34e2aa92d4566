import COpenSSL

/// PEM text out of OpenSSL's writers, through a memory BIO.
enum PEM {
  static func write(_ body: (OpaquePointer?) -> Int32) throws(CryptoError) -> String {
    ERR_clear_error()
    guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError("BIO_new") }
    defer { BIO_free(bio) }
    guard body(bio) == 1 else { throw CryptoError("PEM write") }
    var data: UnsafeMutablePointer<CChar>?
    let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
    guard let data, length > 0 else { throw CryptoError("PEM read") }
    return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
  }
}
