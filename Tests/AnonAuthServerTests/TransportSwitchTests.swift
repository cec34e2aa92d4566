import AnonAuthNet
import Testing

@testable import AnonAuthServer

/// The ALPN choice picks the transport in one place: `anonauth/1` and no ALPN are the
/// native frames, `http/1.1` the JSON API, `h2` HTTP/2.
@Suite struct TransportSwitchTests {
  @Test func alpnNamesPickTheirTransport() {
    #expect(TransportSwitch.choice(alpn: TLSContext.alpn) == .native)
    #expect(TransportSwitch.choice(alpn: nil) == .native)
    #expect(TransportSwitch.choice(alpn: TLSContext.http11) == .http1)
    #expect(TransportSwitch.choice(alpn: TLSContext.h2) == .http2)
  }
}
