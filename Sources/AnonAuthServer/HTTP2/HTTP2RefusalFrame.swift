/// The one answer the session writes itself, around libnghttp2: `:status 431` with
/// END_STREAM for a request whose header list went over the limit.
///
/// libnghttp2 stops decoding a header block into fields only when the header callback
/// fails it, and then queues RST_STREAM for the stream, which drops any response queued
/// for it. So the 431 goes straight into the socket's queue, before that RST_STREAM:
/// one HEADERS frame whose block is a literal without indexing (RFC 7541 §6.2.2) with
/// the static table's `:status` name (index 8), which leaves both HPACK tables as they
/// were. It never splits one of the session's own header blocks: the session's output
/// is moved to the socket whole frames at a time, and the server's header blocks are
/// far below a frame, so they never take CONTINUATION frames.
enum HTTP2RefusalFrame {
  /// HEADERS (type 1), flags END_STREAM | END_HEADERS, for `stream`.
  static func headerListTooLarge(stream: Int32) -> [UInt8] {
    let block: [UInt8] = [0x08, 0x03] + Array("431".utf8)
    let id = UInt32(bitPattern: stream) & 0x7FFF_FFFF
    return [
      0, 0, UInt8(block.count), 0x01, 0x05,
      UInt8(id >> 24), UInt8((id >> 16) & 0xFF), UInt8((id >> 8) & 0xFF), UInt8(id & 0xFF),
    ] + block
  }
}
