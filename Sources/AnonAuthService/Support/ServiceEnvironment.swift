import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Foundation

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
  /// How long a rotated refresh token may be presented again (docs/protocol.md §8: 10 s).
  public let refreshReuseGraceMs: Int64
  /// The account-linking worker's state: outbound HTTPS, provider keys, throttle, hasher.
  public let linking: LinkingContext
  /// The pool that hashes and checks passwords: separate from the signing pool (so a
  /// token never waits behind scrypt), with a bounded queue.
  public let passwordPool: CPUPool
  /// Fair admission of password hashing, signing and writes per end-user IP and project.
  public let admission: Admission
  /// With mutual TLS (`--admin-requires-client-cert`): AdminService calls need a verified
  /// client certificate besides the admin key.
  public var adminRequiresClientCertificate = false
  /// How email actions' mails are linked, queued and limited (`EmailSettings`).
  public var email = EmailSettings()
  /// How new uids are made (`--uid-order`): Firebase's random ones unless the operator
  /// chose ones that start with their creation second.
  public var uidOrder = UIDOrder.random

  /// - Parameters:
  ///   - outbound: how provider keys and Facebook's Graph API are fetched; without one,
  ///     providers that need the network answer `INVALID_IDP_RESPONSE`.
  ///   - passwordHasher: scrypt parameters of new hashes (tests use cheaper ones).
  ///   - signInThrottle: the limits on failed password sign-ins.
  ///   - passwordPool: where scrypt runs; by default `defaultPasswordThreads` threads
  ///     and at most `defaultPasswordQueue` waiting jobs.
  ///   - admissionLimits: rates and shares per IP and project (`Admission`): production's
  ///     defaults unless given (the daemon passes its flags); a test that wants none says
  ///     so by name (`.off`).
  /// One thread fewer than the cores (at least one): a burst of password sign-ins, even
  /// within every quota, then leaves a core to the event loop, token signing and reads,
  /// whose latency would otherwise follow scrypt's.
  public static var defaultPasswordThreads: Int {
    max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
  }

  public init(
    store: Store, directory: ProjectDirectory, minter: TokenMinter, clock: any ServiceClock,
    ipPolicy: EndUserIPPolicy, metrics: ServiceMetrics, logger: Logger, masterKey: [UInt8],
    refreshReuseGraceMs: Int64 = 10_000, outbound: any OutboundHTTP = NoOutboundHTTP(),
    passwordHasher: PasswordHasher = PasswordHasher(), signInThrottle: SignInThrottle = SignInThrottle(),
    passwordPool: CPUPool? = nil, admissionLimits: AdmissionLimits = AdmissionLimits()
  ) {
    let passwordPool =
      passwordPool
      ?? CPUPool(
        threads: Self.defaultPasswordThreads, name: "anonauth-pw", maxQueued: Self.defaultPasswordQueue)
    self.passwordPool = passwordPool
    let passwordPlaces = passwordPool.threads + min(passwordPool.maxQueued, 4096)
    let signingPlaces = minter.cpuPool.threads + AdmissionLimits.nominalSigningQueue
    self.admission = Admission(
      limits: admissionLimits,
      places: { work in
        switch work {
        case .password: passwordPlaces
        case .signing: signingPlaces
        case .write: AdmissionLimits.nominalWriteQueue
        }
      }, clock: clock, onRefusal: { [metrics] work, limit in metrics.admissionRefused(work, limit) })
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
      outbound: outbound, clock: clock, throttle: signInThrottle, hasher: passwordHasher,
      providerGate: ProviderGate(onRefusal: { [metrics] in
        metrics.providerBusyRefusals.add(1, ordering: .relaxed)
      }))
  }

  /// How many password jobs may wait for a thread: at about 100 ms a hash on each core,
  /// a longer queue only makes callers time out.
  public static let defaultPasswordQueue = 64

  /// Runs a write job, admitted first as one unit of `.write` as `admitted` says (a
  /// unit the call reserved, or a new one; none for internal work); a documented
  /// `RPCError` thrown inside passes through; a store that cannot take writes now (disk
  /// full, read-only, I/O error, no cluster leader) is `STORE_UNAVAILABLE`, so clients
  /// retry; anything else is logged and becomes `INTERNAL`. A sign-up the quota refused
  /// (`SignUpQuota.Refused`) is told when to retry from a read of its window.
  func write<T: Sendable>(_ admitted: Admitted, _ job: @escaping @Sendable (Database) throws -> T)
    async throws(RPCError) -> T
  {
    let ticket = try admitted.enter(.write)
    defer { ticket?.leave() }
    do {
      return try await store.write(job)
    } catch let refused as SignUpQuota.Refused {
      do {
        throw try await store.read { db in try refused.answer(db) }
      } catch let answer as RPCError {
        throw answer
      } catch {
        throw refused.unread
      }
    } catch {
      throw storeFailure(error, "store write failed")
    }
  }

  func read<T: Sendable>(_ job: @escaping @Sendable (Database) throws -> T) async throws(RPCError) -> T {
    do {
      return try await store.read(job)
    } catch {
      throw storeFailure(error, "store read failed")
    }
  }

  /// What a call gets for an error out of the store (directly, or through the project
  /// directory or the token minter), logged under `what` unless it is the caller's own.
  /// The one place a `StoreError` becomes an `RPCError`: the store does not know the wire.
  func storeFailure(_ error: any Error, _ what: String) -> RPCError {
    switch error {
    case let error as RPCError:
      return error
    case is CancellationError:
      // The call was cancelled (its connection closed, its deadline passed): its answer,
      // if any is still sent, is not a failure of the store.
      return RPCError(.deadlineExceeded, "the call was cancelled")
    case let error as StoreError where error.kind == .invalidArgument && error.message.contains("NUL"):
      // The replicated store's wire carries text NUL-terminated: such a value is refused.
      return RPCError(.malformedRequest, "a text field holds a NUL character, which the store cannot keep")
    case let error as StoreError where error.kind == .unavailable:
      logger.error(what, ["error": .string("\(error)")])
      return Self.noLeader
    case let error as StoreError where error.kind == .busy:
      // Another daemon's writer held the replicated store's write lock past the busy
      // timeout: a retry goes through.
      logger.error(what, ["error": .string("\(error)")])
      return RPCError(.storeUnavailable, "the store is busy: nothing was changed; retry shortly")
    case let error as StoreError where [.full, .readOnly, .io, .corrupt].contains(error.kind):
      logger.error(what, ["error": .string("\(error)")])
      let why =
        switch error.kind {
        case .full: "the data disk is full"
        case .corrupt: "the store failed its integrity check"
        default: "the store cannot be written (\(error.kind))"
        }
      return RPCError(.storeUnavailable, "\(why): nothing was changed, reads still work; retry later")
    default:
      logger.error(what, ["error": .string("\(error)")])
      return RPCError(.internalError, "the store failed")
    }
  }

  /// What a call gets while the replicated store has no leader in reach (an election
  /// after a node was lost takes seconds). A write cut off by the loss may have committed.
  static let noLeader = RPCError(
    .storeUnavailable,
    "the replicated store has no leader in reach (an election may be running); retry shortly")

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
