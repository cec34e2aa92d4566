import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// What every service shares: the store, the project directory, the token minter, the
/// clock and the policies. Built once by the daemon (or a test).
public struct ServiceEnvironment: Sendable {
  public let store: Store
  public let directory: ProjectDirectory
  public let minter: TokenMinter
  public let clock: any ServiceClock
  public let ipPolicy: EndUserIPPolicy
  public let metrics: ServiceMetrics
  public let logger: Logger
  /// Seals refresh-token successors for the reuse grace window.
  public let masterKey: [UInt8]
  /// How long a rotated refresh token may be presented again (PROTOCOL.md: 10 s).
  public let refreshReuseGraceMs: Int64
  /// The account-linking worker's state: outbound HTTPS, provider keys, throttle, hasher.
  public let linking: LinkingContext
  /// With mutual TLS (`--admin-requires-client-cert`): AdminService calls need a verified
  /// client certificate besides the admin key.
  public var adminRequiresClientCertificate = false

  /// - Parameters:
  ///   - outbound: how provider keys and Facebook's Graph API are fetched; without one,
  ///     providers that need the network answer `INVALID_IDP_RESPONSE`.
  ///   - passwordHasher: scrypt parameters of new hashes (tests use cheaper ones).
  ///   - signInThrottle: the limits on failed password sign-ins.
  public init(
    store: Store, directory: ProjectDirectory, minter: TokenMinter, clock: any ServiceClock,
    ipPolicy: EndUserIPPolicy, metrics: ServiceMetrics, logger: Logger, masterKey: [UInt8],
    refreshReuseGraceMs: Int64 = 10_000, outbound: any OutboundHTTP = NoOutboundHTTP(),
    passwordHasher: PasswordHasher = PasswordHasher(), signInThrottle: SignInThrottle = SignInThrottle()
  ) {
    self.store = store
    self.directory = directory
    self.minter = minter
    self.clock = clock
    self.ipPolicy = ipPolicy
    self.metrics = metrics
    self.logger = logger
    self.masterKey = masterKey
    self.refreshReuseGraceMs = refreshReuseGraceMs
    self.linking = LinkingContext(
      outbound: outbound, clock: clock, throttle: signInThrottle, hasher: passwordHasher)
  }

  /// The bounded pool for CPU-heavy work (signing, scrypt).
  var cpuPool: CPUPool { minter.cpuPool }

  /// Runs a write job; a documented `RPCError` thrown inside passes through, anything
  /// else is logged and becomes `INTERNAL`.
  func write<T: Sendable>(_ job: @escaping @Sendable (Database) throws -> T) async throws(RPCError) -> T {
    do {
      return try await store.write(job)
    } catch let error as RPCError {
      throw error
    } catch {
      logger.error("store write failed", ["error": .string("\(error)")])
      throw RPCError(.internalError, "the store failed")
    }
  }

  func read<T: Sendable>(_ job: @escaping @Sendable (Database) throws -> T) async throws(RPCError) -> T {
    do {
      return try await store.read(job)
    } catch let error as RPCError {
      throw error
    } catch {
      logger.error("store read failed", ["error": .string("\(error)")])
      throw RPCError(.internalError, "the store failed")
    }
  }

  /// The project named by the call's `x-api-key`, also reported for the call's log line.
  func project(_ context: CallContext) throws(RPCError) -> ProjectRecord {
    let project = try directory.project(apiKey: context.metadata["x-api-key"])
    context.log.setProject(project.projectID)
    return project
  }

  /// Whether the call also carries a valid admin key (`authorization: Bearer ...`).
  func callerIsAdmin(_ context: CallContext) -> Bool {
    guard let header = context.metadata["authorization"], header.hasPrefix("Bearer ") else { return false }
    return directory.isAdminKey(String(header.dropFirst(7)))
  }
}
