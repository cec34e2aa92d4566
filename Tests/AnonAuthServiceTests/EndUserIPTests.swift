import AnonAuthService
import AnonAuthWire
import Testing

@Suite("x-end-user-ip")
struct EndUserIPTests {
  @Test("from an untrusted peer it is ignored: the peer's address is counted")
  func untrusted() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(1)
      _ = try await h.signUp(peerIP: "198.51.100.1", extra: ["x-end-user-ip": "192.0.2.1"])
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "198.51.100.1", extra: ["x-end-user-ip": "192.0.2.2"])
      }
      // A wrong admin key does not make the caller trusted.
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(
          peerIP: "198.51.100.1", extra: ["x-end-user-ip": "192.0.2.3", "authorization": "Bearer aak_wrong"])
      }
      #expect(try await h.countedIPKeys() == ["198.51.100.1"])
    }
  }

  @Test("beside a valid admin key it is believed")
  func adminKey() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(1)
      let admin = "Bearer \(h.adminKey)"
      _ = try await h.signUp(
        peerIP: "198.51.100.1", extra: ["x-end-user-ip": "192.0.2.1", "authorization": admin])
      _ = try await h.signUp(
        peerIP: "198.51.100.1", extra: ["x-end-user-ip": "192.0.2.2", "authorization": admin])
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(
          peerIP: "198.51.100.1", extra: ["x-end-user-ip": "192.0.2.1", "authorization": admin])
      }
      // An unparsable claim falls back to the peer.
      _ = try await h.signUp(
        peerIP: "198.51.100.1", extra: ["x-end-user-ip": "nonsense", "authorization": admin])
      #expect(try await h.countedIPKeys() == ["192.0.2.1", "192.0.2.2", "198.51.100.1"])
    }
  }

  @Test("from a peer inside a trusted-proxy CIDR it is believed; from outside it is not")
  func trustedProxy() async throws {
    let trusted = try #require(IPNetwork("10.0.0.0/8"))
    try await ServiceHarness.with(trustedProxies: [trusted]) { h in
      try await h.setSignUpQuota(1)
      _ = try await h.signUp(peerIP: "10.1.2.3", extra: ["x-end-user-ip": "192.0.2.1"])
      _ = try await h.signUp(peerIP: "10.9.9.9", extra: ["x-end-user-ip": "2001:db8::1"])
      // An IPv4 proxy seen through a dual-stack socket.
      _ = try await h.signUp(peerIP: "::ffff:10.4.4.4", extra: ["x-end-user-ip": "192.0.2.44"])
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "10.1.2.3", extra: ["x-end-user-ip": "192.0.2.1"])
      }
      _ = try await h.signUp(peerIP: "11.0.0.1", extra: ["x-end-user-ip": "192.0.2.9"])
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "11.0.0.1", extra: ["x-end-user-ip": "192.0.2.10"])
      }
      // Counted at one time: in key order (the minute's counters keep no order of their own).
      #expect(try await h.countedIPKeys() == ["11.0.0.1", "192.0.2.1", "192.0.2.44", "2001:db8:0:0::/64"])
    }
  }
}
