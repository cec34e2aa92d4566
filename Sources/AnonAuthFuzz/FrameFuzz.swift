import AnonAuthWire

/// Splits the input at a size taken from its first byte, so the decoder sees frames cut
/// at every place a socket read can cut them; each body is decoded as a `Frame`. Bodies
/// of 32 bytes and more take the decoder's large-body path (64 KiB in the daemon), so
/// small inputs reach both paths and their hand-over.
enum FrameFuzz {
  static func run(_ data: [UInt8]) {
    guard let first = data.first else { return }
    let step = Int(first) + 1
    var decoder = FrameDecoder(maxFrameSize: 64 * 1024, largeBodyBytes: 32)
    var index = 1
    while index < data.count {
      let end = min(index + step, data.count)
      decoder.append(Array(data[index..<end]))
      index = end
      while true {
        let body: [UInt8]?
        do {
          body = try decoder.next()
        } catch {
          return
        }
        guard let body else { break }
        if let frame = try? Frame(serializedBytes: body) {
          _ = frame.serializedBytes()
        }
      }
    }
  }
}
