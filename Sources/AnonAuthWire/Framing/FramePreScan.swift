/// One linear pass over the wire bytes of a `Frame`, before protobuf-c unpacks it: counts
/// the metadata entries and bytes of every `Call` in it, so that a frame of hundreds of
/// thousands of tiny entries is refused without allocating any of them.
///
/// It only refuses what is over `CallLimits`; bytes it cannot follow are left for the
/// real decoder to judge, so it never accepts or refuses differently from protobuf-c
/// otherwise.
public enum FramePreScan {
  /// What the scan found.
  public enum Verdict: Equatable, Sendable {
    case withinLimits
    /// Metadata over `CallLimits`: entries and bytes counted so far (the scan stops early).
    case metadataOverLimits(entries: Int, bytes: Int)
  }

  /// Field numbers from `rpc.proto`.
  private static let frameCallField: UInt64 = 1
  private static let callMetadataField: UInt64 = 3
  private static let lengthDelimited: UInt64 = 2

  public static func scan(_ frame: [UInt8]) -> Verdict {
    var entries = 0
    var bytes = 0
    var reader = WireReader(bytes: frame[...])
    while let field = reader.nextField() {
      guard field.number == frameCallField, let call = field.payload else { continue }
      var callReader = WireReader(bytes: call)
      while let callField = callReader.nextField() {
        guard callField.number == callMetadataField, let entry = callField.payload else { continue }
        entries += 1
        bytes += entry.count
        if entries > CallLimits.maxMetadataEntries || bytes > CallLimits.maxMetadataBytes {
          return .metadataOverLimits(entries: entries, bytes: bytes)
        }
      }
    }
    return .withinLimits
  }

  /// Walks the top-level fields of a message. Stops (returns nil) at the end or at the
  /// first byte it cannot follow. Every length is a bounds-checked `UInt64` compared with
  /// what is left before any slicing, so it never traps.
  struct WireReader {
    var bytes: ArraySlice<UInt8>

    struct Field {
      let number: UInt64
      /// The bytes of a length-delimited field; nil for other wire types.
      let payload: ArraySlice<UInt8>?
    }

    mutating func nextField() -> Field? {
      guard let key = readVarint() else { return nil }
      let number = key >> 3
      switch key & 7 {
      case 0:
        guard readVarint() != nil else { return nil }
        return Field(number: number, payload: nil)
      case 1:
        return skip(8) ? Field(number: number, payload: nil) : nil
      case 5:
        return skip(4) ? Field(number: number, payload: nil) : nil
      case FramePreScan.lengthDelimited:
        guard let length = readVarint(), length <= UInt64(bytes.count) else { return nil }
        let end = bytes.startIndex + Int(length)
        let payload = bytes[bytes.startIndex..<end]
        bytes = bytes[end...]
        return Field(number: number, payload: payload)
      default:
        return nil  // groups and invalid wire types: the decoder decides
      }
    }

    private mutating func skip(_ count: Int) -> Bool {
      guard bytes.count >= count else { return false }
      bytes = bytes.dropFirst(count)
      return true
    }

    private mutating func readVarint() -> UInt64? {
      var value: UInt64 = 0
      var shift: UInt64 = 0
      var index = bytes.startIndex
      while index < bytes.endIndex, shift < 64 {
        let byte = bytes[index]
        value |= UInt64(byte & 0x7f) << shift
        index += 1
        if byte & 0x80 == 0 {
          bytes = bytes[index...]
          return value
        }
        shift += 7
      }
      return nil
    }
  }
}

/// A `Frame` whose calls carry metadata over `CallLimits` does not decode: the connection
/// answers `GoAway` `MALFORMED_FRAME`, like any other frame it will not unpack.
extension Frame: ProtoPreScanned {
  static func preScanAccepts(_ bytes: [UInt8]) -> Bool {
    FramePreScan.scan(bytes) == .withinLimits
  }
}
