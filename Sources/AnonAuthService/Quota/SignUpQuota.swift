import AnonAuthStore
import AnonAuthWire

/// The per-IP sign-up quota: a sliding one-hour window per IP key per project, kept in
/// the store so that it survives restarts. `admit` runs inside the sign-up's own write
/// job; the store has one writer, so check-and-count is atomic and exactly N of M
/// concurrent attempts get in.
public enum SignUpQuota {
  public static let windowMs: Int64 = 3_600_000

  /// Counts one sign-up for `ipKey`, or refuses it.
  /// - Throws: `TOO_MANY_ATTEMPTS_TRY_LATER` with `retry_after_seconds` (1...3600).
  public static func admit(_ db: Database, project: ProjectRecord, ipKey: String, nowMs: Int64) throws {
    let since = nowMs - windowMs
    try QuotaRepository.prune(db, projectID: project.projectID, ipKey: ipKey, beforeMs: since)
    let window = try QuotaRepository.standing(
      db, projectID: project.projectID, ipKey: ipKey, sinceMs: since, nowMs: nowMs)
    let quota = window.scheduled ?? project.effectiveSignUpQuotaPerHour
    if window.count >= quota {
      // A place is free once enough sign-ups have turned an hour old to bring the count
      // under the quota: the (count - quota)-th oldest is the one to wait for (the oldest
      // when the window is exactly full; a later one when a lower quota came into force).
      let blocking = try QuotaRepository.eventTime(
        db, projectID: project.projectID, ipKey: ipKey, sinceMs: since, offset: window.count - quota)
      let freeAtMs = (blocking ?? window.oldestMs ?? nowMs) + windowMs
      let seconds = min(3600, max(1, (freeAtMs - nowMs + 999) / 1000))
      throw RPCError(
        .tooManyAttempts, "too many sign-ups from this address; try again later",
        details: ["retry_after_seconds": String(seconds)])
    }
    try QuotaRepository.record(db, projectID: project.projectID, ipKey: ipKey, atMs: nowMs)
  }
}
