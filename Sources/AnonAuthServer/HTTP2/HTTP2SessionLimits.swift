import CNghttp2

/// The HTTP/2 server session's settings and libnghttp2's protective options, in one
/// place so that docs/operations.md can name each one and the attack it answers.
/// Built against Debian bookworm's libnghttp2 1.52.0-1+deb12u3, which carries the fixes
/// for CVE-2023-44487 (rapid reset), CVE-2024-28182 (CONTINUATION flood) and
/// CVE-2026-27135 (an assertion reachable from crafted frames).
enum HTTP2SessionLimits {
  /// SETTINGS_MAX_HEADER_LIST_SIZE: the HTTP/1.1 transport's head limit, so both
  /// transports take the same metadata. The session also counts the decoded list itself
  /// (names + values + 32 per field, as RFC 9113 §6.5.2 does) and answers a larger one
  /// 431 without keeping it: an HPACK bomb (small frames that expand to huge lists by
  /// referencing the dynamic table) costs at most this much per stream.
  static let maxHeaderListBytes = HTTPLimits.maxHeadBytes
  /// Header fields in one request, as for HTTP/1.1.
  static let maxHeaderCount = HTTPLimits.maxHeaderCount
  /// SETTINGS_INITIAL_WINDOW_SIZE: a stream's receive window; one unauthenticated body
  /// fits in it, and the session gives the window back as the stream's handler takes
  /// the bytes (whose buffered bodies are charged to the receive budgets).
  static let initialWindowSize: Int32 = 64 * 1024
  /// The connection's receive window: enough for several streams' bodies at once.
  static let connectionWindowSize: Int32 = 1024 * 1024
  /// SETTINGS_HEADER_TABLE_SIZE: the HPACK dynamic table the peer may make us hold (the
  /// RFC's default, 4 KiB); libnghttp2's decoder refuses a table-size update above it.
  static let headerTableSize: UInt32 = 4096
  /// The most our encoder's table grows, whatever the peer's SETTINGS_HEADER_TABLE_SIZE.
  static let maxDeflateTableSize = 4096
  /// CVE-2023-44487 (rapid reset): RST_STREAMs from the peer are a token bucket of this
  /// many, refilled at `resetRate` a second; past it libnghttp2 sends GOAWAY and the
  /// connection closes. gRPC clients reset only cancelled calls, far below this.
  static let resetBurst: UInt64 = 200
  static let resetRate: UInt64 = 33
  /// CVE-2024-28182: the most CONTINUATION frames after one HEADERS frame; past it the
  /// connection is closed (libnghttp2 sends no GOAWAY then). A 16 KiB header list needs
  /// at most one.
  static let maxContinuations = 8
  /// Entries in one SETTINGS frame (there are 7 defined settings): a SETTINGS frame of
  /// thousands of entries ends the session.
  static let maxSettingsEntries = 16
  /// PING and SETTINGS acknowledgements waiting to be sent: a peer that floods PINGs
  /// while not reading our answers is cut off (GOAWAY) past this many.
  static let maxOutboundAcks = 100

  /// Response bytes one connection may hold queued for a peer whose window is closed
  /// before it counts as over its output budget (`HTTP2OutputBudget`): a few hundred
  /// typical answers, or a handful of reflection answers. Queued bytes also count
  /// against `--max-buffered-bytes(-per-ip)`.
  static let maxQueuedOutputBytes = 1 << 20
  /// Streams refused at once that a connection may cause in a burst, then one a second
  /// (`HTTP2RefusalBucket`); past it, `GOAWAY ENHANCE_YOUR_CALM` and close.
  static let refusedStreamBurst = 8
  /// What a connection ended for its refusals costs its address in
  /// `--max-connection-rate-per-ip`: as many connections as it was allowed refusals, so
  /// an attacker reconnecting to refuse again pays a handshake's pace per refusal.
  static let calmedConnectionCost = refusedStreamBurst
  /// Bytes an HTTP/2 connection reads in one turn of its loop (other transports read up
  /// to `SocketStream.defaultReadBudgetBytes`): two full frames. A header block costs
  /// HPACK decoding even when it is refused (a 16 KiB block that refers to a 4 KB
  /// field 12,000 times costs about 0.1 ms to decode into nothing), so a turn of 256 KiB
  /// held every other connection of the loop behind 1.6 ms of one connection's blocks.
  static let readBudgetBytes = 32 * 1024

  /// The options every server session gets.
  static func makeOption() -> OpaquePointer? {
    var option: OpaquePointer?
    guard nghttp2_option_new(&option) == 0, let option else { return nil }
    // The session gives windows back only as handlers take the bytes.
    nghttp2_option_set_no_auto_window_update(option, 1)
    nghttp2_option_set_stream_reset_rate_limit(option, resetBurst, resetRate)
    nghttp2_option_set_max_continuations(option, maxContinuations)
    nghttp2_option_set_max_settings(option, maxSettingsEntries)
    nghttp2_option_set_max_outbound_ack(option, maxOutboundAcks)
    nghttp2_option_set_max_deflate_dynamic_table_size(option, maxDeflateTableSize)
    // Closed streams are forgotten at once (no priority tree to keep them for).
    nghttp2_option_set_no_closed_streams(option, 1)
    return option
  }

  /// The server's SETTINGS frame.
  static func settings(maxConcurrentStreams: Int) -> [nghttp2_settings_entry] {
    func entry(_ id: nghttp2_settings_id, _ value: UInt32) -> nghttp2_settings_entry {
      nghttp2_settings_entry(settings_id: Int32(id.rawValue), value: value)
    }
    return [
      entry(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, UInt32(clamping: max(1, maxConcurrentStreams))),
      entry(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, UInt32(maxHeaderListBytes)),
      entry(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, UInt32(initialWindowSize)),
      entry(NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, headerTableSize),
      entry(NGHTTP2_SETTINGS_ENABLE_PUSH, 0),
    ]
  }
}
