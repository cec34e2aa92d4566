import AnonAuthService
import AnonAuthWire
import Testing

/// The admin key the emulator listener stands `Bearer owner` in for: it passes the same
/// check as a stored key, in this process only, and each one is new.
@Suite struct ProcessAdminKeyTests {
  @Test("A process admin key passes AdminService's check; another string does not")
  func processKey() async throws {
    try await ServiceHarness.with { h in
      let key = try h.stack.directory.makeProcessAdminKey()
      #expect(key.count >= 43)
      #expect(try h.stack.directory.makeProcessAdminKey() != key)
      #expect(h.stack.directory.isAdminKey(key))
      #expect(!h.stack.directory.isAdminKey("owner"))
      let context = CallContext(
        method: "/\(AdminService.name)/GetProjectConfig", metadata: ["authorization": "Bearer \(key)"],
        peerIP: "127.0.0.1", requestID: "t")
      try h.admin.authenticate(context)
      let owner = CallContext(
        method: "/\(AdminService.name)/GetProjectConfig", metadata: ["authorization": "Bearer owner"],
        peerIP: "127.0.0.1", requestID: "t")
      expectRPCError(.adminKeyInvalid) { () throws(RPCError) in try h.admin.authenticate(owner) }
    }
  }
}
