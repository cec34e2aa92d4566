import AnonAuthWire
import Synchronization

/// Fair admission of expensive work (password hashing, token signing, store writes) per
/// end-user IP and per project, so that one source or one tenant cannot starve the
/// others. Each kind of work has, per IP key (IPv4 address or IPv6 /64, as the sign-up
/// quota counts) and per project:
/// - a **rate** that counts every unit admitted, successes included (`RateTable`);
/// - a **share** of the pool's places: one IP may hold at most `ipSharePercent` of the
///   pool's threads plus queue at once, one project at most `projectSharePercent`.
///
/// Over a limit the call is refused before any work with `TOO_MANY_ATTEMPTS_TRY_LATER`
/// and `retry_after_seconds` (the rate's wait, or 1 for a share). The failed-sign-in
/// throttle (`SignInThrottle`) is separate and unchanged: it locks guessing out, this
/// paces work.
///
/// Admission cannot be forgotten: the password pool, the signing pool, the end-user write
/// path and the outbound client take an `Admitted` value, and the only ways to get one
/// are a call's admission scope (`scope`, through `ServiceEnvironment.admitting`) and the
/// named exemptions of `Admitted.internalWork` (admin calls, start-up, workers). Whatever
/// runs with a call's `Admitted` is admitted per source by the operation itself.
/// Transports need nothing: they call the services.
public final class Admission: Sendable {
  /// Who asks: the call's project and its end user's IP key (nil when unknown).
  public struct Source: Sendable, Hashable {
    public let projectID: String
    public let ipKey: String?

    public init(projectID: String, ipKey: String?) {
      self.projectID = projectID
      self.ipKey = ipKey
    }
  }

  /// A call's admission: where its work is admitted and as whom, and the tickets the
  /// call reserved up front (`Admitted.reserve`) that its work has not used yet.
  struct Scope: Sendable {
    let admission: Admission
    let source: Source
    let reserved = Reserved()
  }

  /// Tickets a call took before its first expensive step, used by later steps.
  final class Reserved: Sendable {
    private let tickets = Mutex<[Ticket]>([])

    func add(_ added: [Ticket]) { tickets.withLock { $0 += added } }

    func take(_ work: AdmissionWork) -> Ticket? {
      tickets.withLock { list in list.firstIndex { $0.work == work }.map { list.remove(at: $0) } }
    }

    func takeAll() -> [Ticket] {
      tickets.withLock { list in
        defer { list = [] }
        return list
      }
    }
  }

  /// Which limit refused a unit of work (for metrics).
  public enum Limit: String, Sendable, CaseIterable {
    case ipRate = "ip_rate"
    case projectRate = "project_rate"
    case ipShare = "ip_share"
    case projectShare = "project_share"
  }

  /// One admitted unit of work, holding its place in the shares until `leave`.
  public final class Ticket: Sendable {
    private let admission: Admission
    let work: AdmissionWork
    private let source: Source
    private let left = Atomic<Bool>(false)

    init(admission: Admission, work: AdmissionWork, source: Source) {
      self.admission = admission
      self.work = work
      self.source = source
    }

    /// A ticket dropped without `leave` (a path that forgot it) still gives its place back.
    deinit { leave() }

    /// Gives the place back (once; later calls do nothing).
    public func leave() { end(refund: false) }

    /// Gives the place back and the unit to the rates: the work was never done (a call
    /// that ended before using what it reserved).
    func cancel() { end(refund: true) }

    private func end(refund: Bool) {
      if !left.exchange(true, ordering: .acquiringAndReleasing) {
        admission.leave(work, source, refund: refund)
      }
    }
  }

  /// One kind of work's rates and held places.
  private struct Lane {
    var ipRate: RateTable?
    var projectRate: RateTable?
    let ipShare: Int
    let projectShare: Int
    var ipHeld: [String: Int] = [:]
    var projectHeld: [String: Int] = [:]

    /// Takes a unit for `source`, or says which limit refuses it and for how long.
    /// Mutated in place (through the array's subscript), so no table is ever copied.
    mutating func admit(_ source: Source, nowUs: Int64) -> (Limit, Int64)? {
      if let ip = source.ipKey, ipHeld[ip, default: 0] >= ipShare { return (.ipShare, 1) }
      if projectHeld[source.projectID, default: 0] >= projectShare { return (.projectShare, 1) }
      if let ip = source.ipKey, let wait = ipRate?.wait(ip, nowUs: nowUs) { return (.ipRate, wait) }
      if let wait = projectRate?.wait(source.projectID, nowUs: nowUs) { return (.projectRate, wait) }
      if let ip = source.ipKey {
        ipRate?.take(ip, nowUs: nowUs)
        ipHeld[ip, default: 0] += 1
      }
      projectRate?.take(source.projectID, nowUs: nowUs)
      projectHeld[source.projectID, default: 0] += 1
      return nil
    }
  }

  public let limits: AdmissionLimits
  private let clock: any ServiceClock
  private let lanes: Mutex<[Lane]>
  private let onRefusal: @Sendable (AdmissionWork, Limit) -> Void

  /// - Parameter places: each kind's pool size (threads plus queue) the shares are of.
  public init(
    limits: AdmissionLimits, places: @Sendable (AdmissionWork) -> Int, clock: any ServiceClock,
    onRefusal: @escaping @Sendable (AdmissionWork, Limit) -> Void = { _, _ in }
  ) {
    self.limits = limits
    self.clock = clock
    self.onRefusal = onRefusal
    lanes = Mutex(
      AdmissionWork.allCases.map { work in
        let rates = limits.rates(work)
        let total = max(1, places(work))
        func table(_ perSecond: Int) -> RateTable? {
          perSecond <= 0
            ? nil
            : RateTable(
              perSecond: perSecond, burst: perSecond * AdmissionLimits.burstSeconds, maxKeys: limits.maxKeys)
        }
        func share(_ percent: Int) -> Int { percent >= 100 ? Int.max : max(1, total * percent / 100) }
        return Lane(
          ipRate: table(rates.perIP), projectRate: table(rates.perProject),
          ipShare: share(limits.ipSharePercent),
          projectShare: share(limits.projectSharePercent))
      })
  }

  /// Admits one unit of `work` for `source`, or refuses it before any work.
  /// - Throws: `TOO_MANY_ATTEMPTS_TRY_LATER` with `retry_after_seconds`.
  public func admit(_ work: AdmissionWork, _ source: Source) throws(RPCError) -> Ticket {
    let nowUs = clock.nowMs() * 1000
    let refusal = lanes.withLock { $0[work.rawValue].admit(source, nowUs: nowUs) }
    guard let (limit, wait) = refusal else { return Ticket(admission: self, work: work, source: source) }
    onRefusal(work, limit)
    let whom = limit == .ipRate || limit == .ipShare ? "this address" : "this project"
    throw RPCError(
      .tooManyAttempts, "too much \(work) work from \(whom); try again later",
      details: ["retry_after_seconds": String(min(3600, wait))])
  }

  private func leave(_ work: AdmissionWork, _ source: Source, refund: Bool) {
    let nowUs = refund ? clock.nowMs() * 1000 : 0
    lanes.withLock { lanes in
      if let ip = source.ipKey {
        Self.release(&lanes[work.rawValue].ipHeld, ip)
        if refund { lanes[work.rawValue].ipRate?.giveBack(ip, nowUs: nowUs) }
      }
      Self.release(&lanes[work.rawValue].projectHeld, source.projectID)
      if refund { lanes[work.rawValue].projectRate?.giveBack(source.projectID, nowUs: nowUs) }
    }
  }

  /// Held counts have an entry only while above zero, so these tables hold at most one
  /// key per unit of work in flight.
  private static func release(_ held: inout [String: Int], _ key: String) {
    guard let count = held[key] else { return }
    held[key] = count > 1 ? count - 1 : nil
  }

  /// Keys held by every rate table and share count (for tests: bounded under many IPs).
  public var trackedKeys: Int {
    lanes.withLock { lanes in
      lanes.reduce(0) {
        $0 + ($1.ipRate?.trackedKeys ?? 0) + ($1.projectRate?.trackedKeys ?? 0) + $1.ipHeld.count
          + $1.projectHeld.count
      }
    }
  }

  /// Units of `work` held now by `source`'s IP key and by its project.
  public func held(_ work: AdmissionWork, _ source: Source) -> (ip: Int, project: Int) {
    lanes.withLock { lanes in
      let lane = lanes[work.rawValue]
      return (
        source.ipKey.map { lane.ipHeld[$0, default: 0] } ?? 0, lane.projectHeld[source.projectID, default: 0]
      )
    }
  }
}
