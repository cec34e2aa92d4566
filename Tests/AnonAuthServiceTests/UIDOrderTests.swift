import AnonAuthWire
import Testing

@testable import AnonAuthService

/// `--uid-order`: both orders make uids of the contract's shape (28 of `[A-Za-z0-9]`);
/// `creation` uids start with their second and sort as their seconds do.
@Suite struct UIDOrderTests {
  @Test(arguments: UIDOrder.allCases)
  func everyUIDHasTheContractsShape(_ order: UIDOrder) throws {
    let uids = try (0..<200).map { _ in try order.newLocalID(nowMs: 1_795_000_000_123) }
    for uid in uids {
      #expect(uid.utf8.count == 28)
      #expect(uid.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
    }
    #expect(Set(uids).count == uids.count)
  }

  @Test func aCreationUIDStartsWithItsSecond() throws {
    let nowMs: Int64 = 1_795_000_000_999
    let uid = try UIDOrder.creation.newLocalID(nowMs: nowMs)
    #expect(UIDOrder.second(ofCreationUID: uid) == 1_795_000_000)
    // The same second, another millisecond: the same six characters, other random ones.
    let twin = try UIDOrder.creation.newLocalID(nowMs: 1_795_000_000_000)
    #expect(twin.prefix(6) == uid.prefix(6))
    #expect(twin.dropFirst(6) != uid.dropFirst(6))
  }

  /// Across each base-62 carry (61 to 62, 3,843 to 3,844, ...) and today's seconds, a
  /// later second's uid sorts after an earlier one's, byte for byte as SQLite compares.
  @Test func creationUIDsSortAsTheirSeconds() throws {
    let seconds: [Int64] = [
      0, 1, 61, 62, 63, 3_843, 3_844, 238_327, 238_328, 1_795_000_000, 1_795_000_001, 56_800_235_583,
    ]
    let uids = try seconds.map { try UIDOrder.creation.newLocalID(nowMs: $0 * 1000) }
    for (earlier, later) in zip(uids, uids.dropFirst()) {
      #expect(Array(earlier.utf8.prefix(6)).lexicographicallyPrecedes(Array(later.utf8.prefix(6))))
    }
    #expect(zip(uids, seconds).allSatisfy { UIDOrder.second(ofCreationUID: $0) == $1 })
  }

  @Test func theCapacityIsSixBase62Digits() {
    #expect(
      UIDOrder.secondCapacity == (0..<UIDOrder.secondDigits).reduce(Int64(1)) { product, _ in product * 62 })
  }

  @Test func secondsOutsideTheDigitsAreClamped() throws {
    #expect(try UIDOrder.creation.newLocalID(nowMs: -5_000).hasPrefix("000000"))
    #expect(try UIDOrder.creation.newLocalID(nowMs: .max).hasPrefix("zzzzzz"))
  }

  @Test(arguments: ["", "12345", "12345-abcdefghijklmnopqrstuvw", "ÿ2345678901234567890123456789"])
  func aHeadThatIsNotSixDigitsHasNoSecond(_ uid: String) {
    #expect(UIDOrder.second(ofCreationUID: uid) == nil)
  }

  /// Each way the service makes an account takes the order of its environment.
  @Test func signUpsAndAdminAccountsTakeTheEnvironmentsOrder() async throws {
    try await ServiceHarness.with { h in
      var env = h.stack.env
      env.uidOrder = .creation
      let accounts = AccountService(environment: env)
      let anonymous = try await accounts.signUp(
        SignUpRequest(kind: .anonymous(AnonymousSignUp())), context: h.accountContext("SignUp"))
      #expect(UIDOrder.second(ofCreationUID: anonymous.localId) == h.clock.nowSeconds())
      h.clock.advance(ms: 62_000)
      let later = try await accounts.signUp(
        SignUpRequest(kind: .anonymous(AnonymousSignUp())), context: h.accountContext("SignUp"))
      #expect(Array(anonymous.localId.utf8).lexicographicallyPrecedes(Array(later.localId.utf8)))
      #expect(UIDOrder.second(ofCreationUID: later.localId) == h.clock.nowSeconds())

      let admin = AdminService(environment: env, cleanup: h.cleanup, backupDirectory: h.directory.file("b"))
      var request = CreateAccountRequest()
      request.projectId = h.projectID
      let made = try await admin.createAccount(request, context: h.adminContext("CreateAccount"))
      #expect(UIDOrder.second(ofCreationUID: made.localId) == h.clock.nowSeconds())
      #expect(made.localId.utf8.count == 28)
    }
  }
}
