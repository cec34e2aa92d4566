import AnonAuthWire

/// The proof that expensive work may run: the password pool, the signing pool (token
/// signing), the end-user write path (`ServiceEnvironment.write`) and the outbound client
/// of the identity providers take one as a parameter, so a handler that never entered
/// admission does not compile.
///
/// Its initializer is private to this file: the only ways to get one are
/// - a call's admission scope (`Admission.scope`, which services reach through
///   `ServiceEnvironment.admitting` once they know the call's project and end-user IP):
///   each operation that takes it admits its own unit of work (`enter`) per IP and
///   project, or takes one the call reserved up front (`reserve`);
/// - `internalWork(_:)`, a named exemption for work no end user asks for directly
///   (admin calls, start-up, the clean-up worker...): nothing is admitted per source.
///   Each reason is a case of `InternalWork`, listed in docs/architecture.md; a new one
///   is a deliberate, reviewable change.
///
/// A call's `Admitted` is for the work of that call: it is not kept past the scope's
/// body (its reserved units are given back when the body returns).
public struct Admitted: Sendable {
  /// Where the proof came from.
  enum Grant: Sendable {
    case call(Admission.Scope)
    case exempt(InternalWork)
  }

  let grant: Grant

  fileprivate init(_ grant: Grant) { self.grant = grant }

  /// Work that runs without per-source admission, each with its reason.
  public enum InternalWork: String, Sendable, CaseIterable {
    /// An AdminService call: authenticated by an admin key, not paced per end user.
    case adminCall = "admin_call"
    /// Making a signing key: at start-up, or a rotation an administrator asked for.
    case signingKeys = "signing_keys"
    /// The clean-up worker's deletions and prunes.
    case cleanupWorker = "cleanup_worker"
    /// The mail worker's deliveries of the outbox (end users' calls only queue mails).
    case mailWorker = "mail_worker"
    /// Giving back a sign-up quota place a call counted but never used (a compensating
    /// write, detached from its call).
    case quotaRefund = "quota_refund"
    /// One part (a pool, the minter) driven on its own, outside any service: its tests
    /// and benchmarks.
    case standalone = "standalone"
  }

  /// Work of `reason`, not admitted per source: every use is a named, grep-able exemption
  /// (`Admitted.internalWork(.adminCall)`...).
  public static func internalWork(_ reason: InternalWork) -> Admitted { Admitted(.exempt(reason)) }

  /// Who the work is for (fair queueing in the pools); nil for internal work.
  public var source: Admission.Source? {
    switch grant {
    case .call(let scope): scope.source
    case .exempt: nil
    }
  }

  /// Why the work is not admitted per source; nil for a call's work.
  public var internalReason: InternalWork? {
    switch grant {
    case .call: nil
    case .exempt(let reason): reason
    }
  }

  /// A ticket for one unit of `work`: one the call reserved, or a new one; nil for
  /// internal work (nothing to admit per source). The caller leaves the ticket once the
  /// work has ended.
  /// - Throws: `TOO_MANY_ATTEMPTS_TRY_LATER` with `retry_after_seconds`.
  public func enter(_ work: AdmissionWork) throws(RPCError) -> Admission.Ticket? {
    guard case .call(let scope) = grant else { return nil }
    if let reserved = scope.reserved.take(work) { return reserved }
    return try scope.admission.admit(work, scope.source)
  }

  /// Admits, all or none, the units of work a call will need, before its first
  /// expensive step: a sign-up is not refused its token after its account was written,
  /// nor a sign-in its write after its password was hashed. Units the call does not use
  /// are given back when its scope ends. For internal work it does nothing.
  /// - Throws: `TOO_MANY_ATTEMPTS_TRY_LATER` with `retry_after_seconds`; then nothing
  ///   is held.
  public func reserve(_ works: [AdmissionWork]) throws(RPCError) {
    guard case .call(let scope) = grant else { return }
    var taken: [Admission.Ticket] = []
    do {
      for work in works { taken.append(try scope.admission.admit(work, scope.source)) }
    } catch {
      for ticket in taken { ticket.cancel() }
      throw error
    }
    scope.reserved.add(taken)
  }

  /// Runs `body` admitted as one unit of `work`, holding its place until `body` has
  /// returned (work that runs in place, not on a pool: an ES256 client secret).
  public func run<T>(_ work: AdmissionWork, _ body: () async throws(RPCError) -> T) async throws(RPCError)
    -> T
  {
    let ticket = try enter(work)
    defer { ticket?.leave() }
    return try await body()
  }
}

extension Admission {
  /// Runs `body` as a call's admission scope for `source`: the `Admitted` it gets admits
  /// the call's expensive work as `source`. Units reserved and not used are given back
  /// (to the shares and the rates) when `body` returns.
  public func scope<T: Sendable>(_ source: Source, _ body: (Admitted) async throws(RPCError) -> T)
    async throws(RPCError) -> T
  {
    let scope = Scope(admission: self, source: source)
    defer { for ticket in scope.reserved.takeAll() { ticket.cancel() } }
    return try await body(Admitted(.call(scope)))
  }
}
