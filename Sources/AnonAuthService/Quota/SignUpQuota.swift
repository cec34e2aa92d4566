import AnonAuthStore
import AnonAuthWire

/// The per-IP sign-up quota: a sliding one-hour window per IP key per project, kept in
/// the store as per-minute counters (`QuotaRepository`) so that it survives restarts and
/// admitting a sign-up costs the same however many the window holds. `admit` runs inside
/// the sign-up's own write job; the store has one writer, and the count and the check
/// are one statement, so check-and-count is atomic and exactly N of M concurrent
/// attempts get in.
public enum SignUpQuota {
  public static let windowMs: Int64 = 3_600_000

  /// Counts one sign-up for `ipKey`, or refuses it: then the write job fails with
  /// `Refused` once it has returned (its changes are taken back), and
  /// `ServiceEnvironment.write` answers `TOO_MANY_ATTEMPTS_TRY_LATER`. The job does not
  /// wait for the decision: on the replicated store that would be a round trip.
  ///
  /// Minutes that have left the window are not pruned here: the count reads the window's
  /// minutes only, and the clean-up worker drops the others every pass
  /// (`pruneQuotaEvents`), so a sign-up costs one statement less.
  public static func admit(_ db: Database, project: ProjectRecord, ipKey: String, nowMs: Int64) throws {
    let since = nowMs - windowMs
    let refused = Refused(
      projectID: project.projectID, ipKey: ipKey, nowMs: nowMs, quota: project.effectiveSignUpQuotaPerHour)
    try QuotaRepository.record(
      db, projectID: project.projectID, ipKey: ipKey, atMs: nowMs, sinceMs: since,
      quota: project.effectiveSignUpQuotaPerHour, else: { refused })
  }

  /// A sign-up the quota refused. What the caller is told comes from a read afterwards.
  public struct Refused: Error, Sendable {
    let projectID: String
    let ipKey: String
    let nowMs: Int64
    /// The project's quota (a scheduled quota in force wins over it).
    let quota: Int64

    /// `TOO_MANY_ATTEMPTS_TRY_LATER` with `retry_after_seconds` (1...3600): when the
    /// window, as it stands now, next has a free place.
    func answer(_ db: Database) throws -> RPCError {
      let since = nowMs - windowMs
      let window = try QuotaRepository.standing(
        db, projectID: projectID, ipKey: ipKey, sinceMs: since, nowMs: nowMs)
      let quota = window.scheduled ?? self.quota
      // A place is free once the hour's start has passed enough sign-ups to bring the
      // count under the quota (more than the oldest when a lower quota came into force);
      // a window with room again (sign-ups aged out since) gives the shortest wait.
      let freeAtMs = window.roomSinceMs(quota: quota, sinceMs: since) + windowMs
      return Self.refusal(retryAfterSeconds: min(3600, max(1, (freeAtMs - nowMs + 999) / 1000)))
    }

    /// The refusal when the window cannot be read: a minute, a wait that neither hammers
    /// a struggling store nor locks a user out for long.
    var unread: RPCError { Self.refusal(retryAfterSeconds: 60) }

    private static func refusal(retryAfterSeconds seconds: Int64) -> RPCError {
      RPCError(
        .tooManyAttempts, "too many sign-ups from this address; try again later",
        details: ["retry_after_seconds": String(seconds)])
    }
  }
}
