/// The pre-scan of a `Frame`: the generic one (`ProtoPreScan`, every field counted, with
/// the frame's own small bound `CallLimits.maxFrameDecodeCost`: a frame is decoded on the
/// I/O loop, and its payload is opaque bytes) plus the metadata limits of its `Call`,
/// checked in the same pass.
///
/// Metadata is unpacked (every entry allocated and hashed) before the method is even
/// looked up, so a frame of hundreds of thousands of tiny entries is refused without
/// allocating any of them.
public enum FramePreScan {
  public typealias Verdict = ProtoPreScan.Verdict

  /// Field number of `Call.metadata` in `rpc.proto`.
  private static let callMetadataField: UInt64 = 3

  public static func scan(_ frame: [UInt8]) -> Verdict {
    var tally = ProtoPreScan.Tally()
    return scan(frame, tally: &tally)
  }

  public static func scan(_ frame: [UInt8], tally: inout ProtoPreScan.Tally) -> Verdict {
    var entries = 0
    var bytes = 0
    let call = Call.protoScanSchema
    return ProtoPreScan.scan(
      frame, schema: Frame.protoScanSchema, limit: Frame.decodeCostLimit, tally: &tally
    ) { schema, field in
      guard schema === call, field.number == callMetadataField, let entry = field.payload else {
        return nil
      }
      entries += 1
      bytes += entry.count
      if entries > CallLimits.maxMetadataEntries || bytes > CallLimits.maxMetadataBytes {
        return .metadataOverLimits(entries: entries, bytes: bytes)
      }
      return nil
    }
  }
}

/// A `Frame` whose calls carry metadata over `CallLimits` does not decode: the connection
/// answers `GoAway` `MALFORMED_FRAME`, like any other frame it will not unpack.
extension Frame {
  static var decodeCostLimit: Int { CallLimits.maxFrameDecodeCost }

  static func preScan(_ bytes: [UInt8], tally: inout ProtoPreScan.Tally) -> ProtoPreScan.Verdict {
    FramePreScan.scan(bytes, tally: &tally)
  }
}
