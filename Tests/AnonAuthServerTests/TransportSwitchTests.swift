import AnonAuthNet
import Testing

@testable import AnonAuthServer

/// The ALPN choice picks the transport in one place: `anonauth/1` the native frames,
/// `http/1.1` the JSON API, `h2` HTTP/2; without ALPN the first bytes decide.
@Suite struct TransportSwitchTests {
  @Test func alpnNamesPickTheirTransport() {
    #expect(TransportSwitch.choice(alpn: TLSContext.alpn) == .native)
    #expect(TransportSwitch.choice(alpn: nil) == nil)
    #expect(TransportSwitch.choice(alpn: TLSContext.http11) == .http1)
    #expect(TransportSwitch.choice(alpn: TLSContext.h2) == .http2)
  }

  @Test(arguments: ["GET ", "POST ", "PUT ", "DELETE ", "HEAD ", "OPTIONS ", "PATCH ", "GET /x HTTP/1.1\r\n"])
  func anHTTPRequestLineWithoutALPNIsHTTP1(_ start: String) {
    #expect(TransportSwitch.sniff(Array(start.utf8)) == .decided(.http1))
  }

  @Test(arguments: ["", "G", "GE", "GET", "OPTIONS", "DEL", "P", "PO"])
  func aPrefixOfAMethodWaitsForMore(_ start: String) {
    #expect(TransportSwitch.sniff(Array(start.utf8)) == .needMore)
  }

  /// Native frames start with a big-endian length no larger than 64 MiB: their first byte
  /// is at most 0x04, below every method's first letter.
  @Test func framesAndOtherBytesAreNative() {
    #expect(TransportSwitch.sniff([0, 0, 0, 0x13, 0x2A]) == .decided(.native))
    #expect(TransportSwitch.sniff([0x04, 0, 0, 0]) == .decided(.native))
    #expect(TransportSwitch.sniff(Array("GETX".utf8)) == .decided(.native))
    #expect(TransportSwitch.sniff(Array("get ".utf8)) == .decided(.native))
    #expect(TransportSwitch.sniff(Array("BREW ".utf8)) == .decided(.native))
  }

  /// The claim docs/protocol.md §1 makes: every method's first four bytes, read as a
  /// frame length, exceed the largest frame size a daemon can be configured with.
  @Test func noRequestLineIsAFrameLength() {
    let largest = UInt64(NumberSetting.maxFrameSize.range.upperBound)
    for method in TransportSwitch.requestLineMethods {
      let length = method.prefix(4).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      #expect(length > largest)
    }
  }
}
