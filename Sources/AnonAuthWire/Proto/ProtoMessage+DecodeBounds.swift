extension ProtoMessage {
  /// Whether this message's encoding is within the decode bounds a receiver holds it to
  /// (`ProtoPreScan`, `CallLimits.maxDecodeCost`): what a transport that hands a message
  /// to a handler without encoding it (the JSON API) checks, so that it refuses what a
  /// byte transport would.
  ///
  /// Only a type that may carry many values (a repeated field or a map at any depth), or a
  /// message with unknown fields of its own, is encoded and scanned. A message of fixed
  /// shape built in Swift holds at most one value per declared field, far below
  /// `CallLimits.maxFixedShapeDecodeCost` (unknown fields in its nested messages are not
  /// looked for: the JSON API never sets any).
  public var isWithinDecodeBounds: Bool {
    guard let bridged = self as? any ProtoCBridged else { return true }
    return Self.scan(bridged)
  }

  private static func scan<M: ProtoCBridged>(_ message: M) -> Bool {
    guard M.protoScanSchema.mayRepeat || !message.unknownFields.isEmpty else { return true }
    var tally = ProtoPreScan.Tally()
    return M.preScan(message.serializedBytes(), tally: &tally) == .withinLimits
  }
}
