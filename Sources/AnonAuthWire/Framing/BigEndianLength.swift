extension Array where Element == UInt8 {
  /// Appends `length` as the 4 big-endian bytes both length prefixes carry (the native
  /// frame's and the gRPC message's, after its flag byte). How a body too long for 32
  /// bits is announced is each framer's own choice, made before this call.
  mutating func appendBigEndianLength(_ length: UInt32) {
    append(UInt8(truncatingIfNeeded: length >> 24))
    append(UInt8(truncatingIfNeeded: length >> 16))
    append(UInt8(truncatingIfNeeded: length >> 8))
    append(UInt8(truncatingIfNeeded: length))
  }
}
