import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// Deleting accounts never holds the writer for long: an account takes at most 100
/// sessions with it, and `DeleteAccounts` deletes at most 16 accounts and 256 rows per
/// write job, so the writes of every other project queued meanwhile are committed
/// between two jobs.
@Suite("DeleteAccounts in bounded jobs")
struct DeleteAccountsChunkTests {
  @Test("1,000 ids with 100 sessions each: several commits, nothing left behind, the bystander served")
  func chunked() async throws {
    try await ServiceHarness.with { h in
      let otherKey = try await h.makeProject("other-project")
      let bystander = try await h.signUp(apiKey: otherKey)
      let projectID = h.projectID
      let ids = (0..<40).map { "delete-me-\($0)" }
      let sessions = RefreshTokensRepository.maxSessionsPerAccount
      try await h.store.write { db in
        for (n, id) in ids.enumerated() {
          try AccountsRepository.insert(
            db, AccountRecord(projectID: projectID, localID: id, isAnonymous: true, createdAtMs: 1))
          for s in 0..<sessions {
            let key = [UInt8(n), UInt8(s)] + [UInt8](repeating: 0x11, count: 46)
            _ = try RefreshTokensRepository.insert(
              db,
              RefreshTokenRecord(
                tokenHash: key, projectID: projectID, localID: id, familyID: "", issuedAtMs: Int64(s),
                authTime: 0, signInProvider: "anonymous"))
          }
        }
      }
      let before = h.store.metrics.transactions
      var request = DeleteAccountsRequest()
      request.projectId = projectID
      request.localIds = ids + (0..<960).map { "unknown-\($0)" }
      let result = try await h.admin.deleteAccounts(request, context: h.adminContext("DeleteAccounts"))
      #expect(result.deleted == 40)
      // 40 accounts of 101 rows, two a job, then 960 unknown ids 16 a job: 80 commits
      // (one job for all of them before).
      #expect(h.store.metrics.transactions - before >= 80)
      let left = try await h.store.read { db in
        try db.queryOne("SELECT count(*) FROM refresh_sessions WHERE project_id = ?", [.text(projectID)])?
          .int(0)
      }
      #expect(left == 0)
      #expect(try await h.accountCount() == 1)
      _ = try await h.refresh(bystander.refreshToken, apiKey: otherKey)
    }
  }
}
