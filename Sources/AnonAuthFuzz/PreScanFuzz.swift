import AnonAuthWire

/// The pre-scan every decode runs (`ProtoPreScan`): the first byte picks a message type,
/// the rest are its wire bytes. The scan must never trap; what it accepts must stay
/// within `CallLimits` and decode with no more protobuf-c allocations than the fields it
/// counted allow; what it refuses must not decode and must allocate nothing.
enum PreScanFuzz {
  /// Types with every shape the scan knows: maps, repeated and singular messages, two
  /// levels of nesting, oneofs, and the frame with its metadata rule.
  static let checks: [@Sendable ([UInt8]) -> Void] = [
    check(Frame.self), check(SignUpRequest.self), check(DeleteAccountsRequest.self),
    check(ImportAccountsRequest.self), check(UpdateProjectConfigRequest.self),
    check(ExportAccountsResponse.self), check(GetUsageResponse.self), check(GetPublicKeysResponse.self),
    check(ListAccountsResponse.self), check(Call.self), check(Reply.self), check(Status.self),
  ]

  static func run(_ data: [UInt8]) {
    guard let first = data.first else { return }
    checks[Int(first) % checks.count](Array(data.dropFirst()))
  }

  private static func check<M: ProtoMessage>(_: M.Type) -> @Sendable ([UInt8]) -> Void {
    { bytes in
      let cost = M.measureDecode(bytes)
      guard cost.verdict == .withinLimits else {
        precondition(!cost.decoded && cost.allocations == 0, "a refused \(M.self) was unpacked")
        return
      }
      precondition(cost.tally.cost <= cost.costLimit, "accepted over the decode cost")
      precondition(cost.costLimit <= CallLimits.maxDecodeCost, "a bound over the largest")
      precondition(cost.tally.unknownFields <= CallLimits.maxUnknownFields, "accepted over the unknowns")
      precondition(
        cost.allocations <= cost.allocationBound,
        "\(M.self): \(cost.allocations) allocations for \(cost.tally.occurrences) fields")
    }
  }
}
