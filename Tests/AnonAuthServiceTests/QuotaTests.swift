import AnonAuthService
import AnonAuthWire
import Testing

@Suite("Per-IP sign-up quota")
struct QuotaTests {
  @Test("12 concurrent sign-ups from one address with quota 5: exactly 5 get in; the window slides")
  func concurrent() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(5)
      let peer = "198.51.100.20"
      let results = await withTaskGroup(of: Result<AuthResponse, RPCError>.self) { group in
        for _ in 0..<12 {
          group.addTask {
            do throws(RPCError) {
              return .success(try await h.signUp(peerIP: peer))
            } catch {
              return .failure(error)
            }
          }
        }
        var all: [Result<AuthResponse, RPCError>] = []
        for await result in group { all.append(result) }
        return all
      }
      var admitted: [AuthResponse] = []
      var refused: [RPCError] = []
      for result in results {
        switch result {
        case .success(let response): admitted.append(response)
        case .failure(let error): refused.append(error)
        }
      }
      #expect(admitted.count == 5)
      #expect(Set(admitted.map(\.localId)).count == 5)
      #expect(refused.count == 7)
      for error in refused {
        #expect(error.reason == Reason.tooManyAttempts.name)
        #expect(error.code == .resourceExhausted)
        let retryAfter = try #require(error.details["retry_after_seconds"].flatMap { Int($0) })
        #expect((1...3600).contains(retryAfter))
      }
      #expect(try await h.accountCount() == 5)
      #expect(try await h.countedIPKeys() == Array(repeating: peer, count: 5))

      // Another address has a window of its own.
      _ = try await h.signUp(peerIP: "198.51.100.21")

      // Half an hour on, the first address waits for the other half.
      h.clock.advance(seconds: 1800)
      let waiting = await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: peer)
      }
      #expect(waiting?.details["retry_after_seconds"] == "1800")

      h.clock.advance(ms: 1_800_001)
      let again = try await h.signUp(peerIP: peer)
      #expect(again.isNewUser)
      #expect(try await h.accountCount() == 7)
    }
  }

  @Test("IPv6 addresses count per /64")
  func ipv6PerSlash64() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(1)
      _ = try await h.signUp(peerIP: "2001:db8:1:2::1")
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "2001:db8:1:2:ffff:eeee:dddd:cccc")
      }
      _ = try await h.signUp(peerIP: "2001:db8:1:3::1")
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "2001:0db8:0001:0003:0000:0000:0000:0002")
      }
      #expect(try await h.countedIPKeys() == ["2001:db8:1:2::/64", "2001:db8:1:3::/64"])
      #expect(try await h.accountCount() == 2)
    }
  }

  @Test("IPv4 and IPv4-mapped IPv6 share a window")
  func mappedIPv4() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(1)
      _ = try await h.signUp(peerIP: "192.0.2.7")
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "::ffff:192.0.2.7")
      }
    }
  }

  @Test("quota 0 means the default, 100: the 101st sign-up within the hour is refused")
  func defaultQuota() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(0)
      #expect(try h.config().signUpQuotaPerHour == 100)
      for index in 0..<100 {
        h.clock.advance(seconds: 1)
        do {
          _ = try await h.signUp()
        } catch {
          Issue.record("sign-up \(index + 1) refused: \(error)")
          return
        }
      }
      let refused = await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp()
      }
      // The oldest of the 100 is 99 s old: it leaves the window in 3501 s.
      #expect(refused?.details["retry_after_seconds"] == "3501")
      #expect(try await h.accountCount() == 100)
    }
  }
}
