import AnonAuthService
import Testing

@Suite("IP keys and networks")
struct IPAddressTests {
  @Test(
    "IPKey.make",
    arguments: [
      ("192.0.2.1", "192.0.2.1"),
      ("0.0.0.0", "0.0.0.0"),
      ("255.255.255.255", "255.255.255.255"),
      ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
      ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
      ("2001:0DB8:0001:0002:0000:0000:0000:0001", "2001:db8:1:2::/64"),
      ("::1", "0:0:0:0::/64"),
      ("fe80::1", "fe80:0:0:0::/64"),
      ("::ffff:192.0.2.1", "192.0.2.1"),
      ("::ffff:c000:201", "192.0.2.1"),
    ] as [(String, String)])
  func ipKey(address: String, key: String) {
    #expect(IPKey.make(address) == key)
  }

  @Test(
    "IPKey.make of anything but a numeric address is nil",
    arguments: [
      "", "garbage", "localhost", "192.0.2", "192.0.2.256", "192.0.2.1/32", " 192.0.2.1", "192.0.2.1:443",
      "[::1]", "2001:db8::1::2", "fe80::1%eth0", "::ffff:192.0.2.300",
    ])
  func ipKeyNil(address: String) {
    #expect(IPKey.make(address) == nil)
  }

  @Test("IPNetwork.contains")
  func contains() throws {
    let ten = try #require(IPNetwork("10.0.0.0/8"))
    #expect(ten.prefixLength == 8)
    #expect(ten.description == "10.0.0.0/8")
    let cases: [(IPNetwork, String, Bool)] = [
      (ten, "10.0.0.0", true),
      (ten, "10.255.255.255", true),
      (ten, "11.0.0.0", false),
      (ten, "9.255.255.255", false),
      (ten, "2001:db8::1", false),
      (ten, "::ffff:10.20.30.40", true),
      (ten, "::ffff:11.0.0.1", false),
      (ten, "::10.20.30.40", false),
      (try #require(IPNetwork("192.168.1.128/25")), "192.168.1.200", true),
      (try #require(IPNetwork("192.168.1.128/25")), "192.168.1.127", false),
      (try #require(IPNetwork("172.16.0.0/12")), "172.31.255.1", true),
      (try #require(IPNetwork("172.16.0.0/12")), "172.32.0.1", false),
      (try #require(IPNetwork("192.0.2.7")), "192.0.2.7", true),
      (try #require(IPNetwork("192.0.2.7")), "192.0.2.8", false),
      (try #require(IPNetwork("0.0.0.0/0")), "203.0.113.9", true),
      (try #require(IPNetwork("2001:db8::/32")), "2001:db8:ffff::1", true),
      (try #require(IPNetwork("2001:db8::/32")), "2001:db9::1", false),
      (try #require(IPNetwork("2001:db8::/32")), "10.0.0.1", false),
      (try #require(IPNetwork("::1/128")), "::1", true),
      (try #require(IPNetwork("::1/128")), "::2", false),
      (try #require(IPNetwork("fd00::/7")), "fdff::1", true),
      (try #require(IPNetwork("fd00::/7")), "fe00::1", false),
    ]
    for (network, address, expected) in cases {
      let bytes = try #require(IPNetwork.parseAddress(address))
      #expect(network.contains(bytes) == expected, "\(network) \(address)")
    }
  }

  @Test(
    "IPNetwork parse failures",
    arguments: [
      "", "/8", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/8/8", "10.0.0.0/x", "10.0.0/8",
      "::/129", "garbage/8", "10.0.0.0 /8", "10.0.0.0/ 8",
    ])
  func parseFailures(text: String) {
    #expect(IPNetwork(text) == nil)
  }

  @Test("a peer inside a trusted CIDR is trusted, as an IPv4 or an IPv4-mapped IPv6 address")
  func trustedPeers() throws {
    let policy = try EndUserIPPolicy.parse(["10.0.0.0/8", "2001:db8::/32"]).get()
    #expect(policy.peerIsTrusted("10.1.2.3"))
    #expect(policy.peerIsTrusted("2001:db8::5"))
    #expect(policy.peerIsTrusted("::ffff:10.1.2.3"))
    #expect(!policy.peerIsTrusted("11.1.2.3"))
    #expect(!policy.peerIsTrusted("::ffff:11.1.2.3"))
    #expect(!policy.peerIsTrusted(nil))
    #expect(!policy.peerIsTrusted("not an address"))

    let refused = EndUserIPPolicy.parse(["10.0.0.0/8", "bogus"])
    #expect(throws: EndUserIPPolicy.ParseError.self) { try refused.get() }
  }
}
