import AnonAuthWire

/// Splits the input at a size taken from its first byte, so the codec sees frames cut at
/// every place a socket read can cut them, and runs them through `FrameReader`, the
/// codec both ends of `anonauth/1` use: frames decoded, Pings answered, the turn budget,
/// the held bytes charged to a small budget (refusals reached). Bodies of 32 bytes and
/// more take the decoder's large-body path (64 KiB in the daemon), so small inputs reach
/// both paths and their hand-over. Whatever the input, a refused or reset reader holds
/// no charge.
enum FrameFuzz {
  /// A budget of 48 KiB that checks the reader never asks for a negative charge.
  final class Charge: ReceiveCharge {
    var held = 0
    func resize(to bytes: Int) -> Bool {
      precondition(bytes >= 0, "a negative charge")
      guard bytes <= 48 * 1024 else { return false }
      held = bytes
      return true
    }
  }

  static func run(_ data: [UInt8]) {
    guard let first = data.first else { return }
    let step = Int(first) + 1
    let charge = Charge()
    var reader = FrameReader(maxFrameSize: 64 * 1024, charge: charge, clock: { 0 }, largeBodyBytes: 32)
    var index = 1
    while index < data.count {
      let end = min(index + step, data.count)
      let accepted = data[index..<end].withUnsafeBytes { reader.append($0) }
      index = end
      guard accepted else {
        precondition(charge.held == 0, "a refused reader kept its charge")
        return
      }
      var delivered = 0
      turn: while true {
        switch reader.next(delivered: &delivered, send: { _ = $0.count }) {
        case .frame(let frame): _ = frame.serializedBytes()
        case .needMore: break turn
        case .turnSpent: delivered = 0
        case .failed:
          reader.reset()
          precondition(charge.held == 0, "a reset reader kept its charge")
          return
        }
      }
    }
  }
}
