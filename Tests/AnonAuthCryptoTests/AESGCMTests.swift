import AnonAuthCrypto
import Testing

@Suite struct AESGCMTests {
  let key = [UInt8](repeating: 7, count: 32)
  let aad = Array("signing-key:k1".utf8)

  @Test(arguments: [0, 1, 15, 16, 17, 1217])
  func roundTrip(length: Int) throws {
    let plaintext = try SecureRandom.bytes(length)
    let sealed = try AESGCM.seal(plaintext, key: key, associatedData: aad)
    #expect(sealed.count == 1 + 12 + length + 16)
    #expect(sealed[0] == 1)
    #expect(try AESGCM.open(sealed, key: key, associatedData: aad) == plaintext)
  }

  @Test func roundTripWithoutAssociatedData() throws {
    let sealed = try AESGCM.seal([1, 2, 3], key: key)
    #expect(try AESGCM.open(sealed, key: key) == [1, 2, 3])
  }

  @Test func noncesDiffer() throws {
    let a = try AESGCM.seal([1, 2, 3], key: key, associatedData: aad)
    let b = try AESGCM.seal([1, 2, 3], key: key, associatedData: aad)
    #expect(a != b)
  }

  @Test func everyFlippedBitIsRejected() throws {
    let sealed = try AESGCM.seal(Array("secret".utf8), key: key, associatedData: aad)
    for bit in 0..<(sealed.count * 8) {
      #expect(throws: CryptoError.self) {
        try AESGCM.open(flippingBit(bit, of: sealed), key: key, associatedData: aad)
      }
    }
  }

  /// The daemon started with another master key printed "authentication failed failed".
  @Test func wrongKeySaysAuthenticationFailedOnce() throws {
    let sealed = try AESGCM.seal(Array("secret".utf8), key: key, associatedData: aad)
    var otherKey = key
    otherKey[0] ^= 1
    do {
      _ = try AESGCM.open(sealed, key: otherKey, associatedData: aad)
      Issue.record("opened with the wrong key")
    } catch {
      #expect(error.description == "AES-GCM open: authentication failed")
    }
  }

  @Test func wrongKeyOrAssociatedDataIsRejected() throws {
    let sealed = try AESGCM.seal(Array("secret".utf8), key: key, associatedData: aad)
    var otherKey = key
    otherKey[31] ^= 1
    #expect(throws: CryptoError.self) { try AESGCM.open(sealed, key: otherKey, associatedData: aad) }
    #expect(throws: CryptoError.self) { try AESGCM.open(sealed, key: key, associatedData: []) }
    #expect(throws: CryptoError.self) {
      try AESGCM.open(sealed, key: key, associatedData: Array("signing-key:k2".utf8))
    }
  }

  @Test func truncatedOrExtendedInputIsRejected() throws {
    let sealed = try AESGCM.seal(Array("secret".utf8), key: key, associatedData: aad)
    for length in 0..<sealed.count {
      #expect(throws: CryptoError.self) {
        try AESGCM.open(Array(sealed.prefix(length)), key: key, associatedData: aad)
      }
    }
    #expect(throws: CryptoError.self) { try AESGCM.open(sealed + [0], key: key, associatedData: aad) }
    #expect(throws: CryptoError.self) {
      try AESGCM.open(Array(sealed.dropFirst()), key: key, associatedData: aad)
    }
  }

  @Test(arguments: [UInt8(0), 2, 255])
  func unknownVersionIsRejected(version: UInt8) throws {
    var sealed = try AESGCM.seal([1, 2, 3], key: key, associatedData: aad)
    sealed[0] = version
    #expect(throws: CryptoError.self) { try AESGCM.open(sealed, key: key, associatedData: aad) }
  }

  @Test(arguments: [0, 16, 31, 33])
  func wrongKeySizeIsRejected(size: Int) throws {
    let badKey = [UInt8](repeating: 1, count: size)
    #expect(throws: CryptoError.self) { try AESGCM.seal([1], key: badKey) }
    let sealed = try AESGCM.seal([1], key: key)
    #expect(throws: CryptoError.self) { try AESGCM.open(sealed, key: badKey) }
  }
}
