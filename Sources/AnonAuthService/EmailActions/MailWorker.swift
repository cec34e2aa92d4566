import AnonAuthStore
import Synchronization

/// Where the mail worker hands a mail: an SMTP server, or in --dev a directory.
public protocol MailTransport: Sendable {
  /// Delivers one mail, or throws why not. Sending takes an `Admitted` like every other
  /// costly operation: the mail worker's own (`.mailWorker`); an end user's call only
  /// queues a mail, admitted as writes (`EmailActionSender`).
  func deliver(_ mail: OutboxMail, _ admitted: Admitted) async throws(MailDeliveryError)
}

/// Why a mail was not delivered: `permanent` (a 5xx answer: retrying cannot help) or not
/// (a 4xx answer, a timeout, a connection refused: tried again later).
public struct MailDeliveryError: Error, Sendable, CustomStringConvertible {
  public var permanent: Bool
  public var message: String

  public init(permanent: Bool, _ message: String) {
    self.permanent = permanent
    self.message = message
  }

  public var description: String { message }
}

/// The mail worker: sends the outbox's mails one by one, oldest due first, and deletes
/// each once delivered. A temporary failure is tried again after a backoff that doubles
/// from `retryBaseMs` up to an hour, at most `maxAttempts` times; a permanent one, or the
/// last attempt, is logged, counted (`anonauth_mails_total{outcome="failed"}`) and
/// dropped. Mails queued before a restart are sent after it: the outbox is in the store.
/// The worker also drops expired codes.
public final class MailWorker: Sendable {
  let store: Store
  let transport: any MailTransport
  let clock: any ServiceClock
  let logger: Logger
  let metrics: ServiceMetrics
  let retryBaseMs: Int64
  let maxAttempts: Int64
  /// Opens the outbox's sealed mails (`OutboxSeal`).
  let masterKey: [UInt8]
  /// Whether this daemon sends now: on the replicated store only the leader does, so a
  /// mail is not sent by every node.
  let sendsNow: @Sendable () -> Bool
  private let wake = WakeSignal()

  public init(
    store: Store, transport: any MailTransport, clock: any ServiceClock, logger: Logger,
    metrics: ServiceMetrics, masterKey: [UInt8],
    retryBaseMs: Int64 = 5_000, maxAttempts: Int64 = 12, sendsNow: @escaping @Sendable () -> Bool = { true }
  ) {
    self.sendsNow = sendsNow
    self.store = store
    self.transport = transport
    self.clock = clock
    self.logger = logger
    self.metrics = metrics
    self.retryBaseMs = retryBaseMs
    self.masterKey = masterKey
    self.maxAttempts = maxAttempts
  }

  /// Wakes the worker now (a mail was queued).
  public func mailQueued() { wake.signal() }

  /// The delay before attempt `attempts + 1`.
  func backoffMs(afterAttempts attempts: Int64) -> Int64 {
    let doubled = retryBaseMs << min(attempts, 20)
    return min(doubled, 3_600_000)
  }

  /// Sends until its task is cancelled (the daemon's service group owns that task and
  /// cancels it at the stop); a mail being handed to the relay then is finished first.
  public func run() async {
    await withTaskCancellationHandler {
      await loop()
    } onCancel: {
      wake.signal()
    }
  }

  private func loop() async {
    var lastPruneMs: Int64 = 0
    while !Task.isCancelled {
      guard sendsNow() else {
        await wake.wait(timeoutMs: 5_000)
        continue
      }
      let nowMs = clock.nowMs()
      if nowMs - lastPruneMs > 60_000 {
        lastPruneMs = nowMs
        _ = try? await store.write { db in try OobCodesRepository.prune(db, nowMs: nowMs, limit: 1000) }
      }
      let due: [OutboxMail]
      do {
        due = try await store.read { db in try MailOutboxRepository.due(db, nowMs: nowMs, limit: 20) }
      } catch {
        logger.error("mail outbox could not be read", ["error": .string("\(error)")])
        await wake.wait(timeoutMs: 5_000)
        continue
      }
      for mail in due where !Task.isCancelled {
        await attempt(mail)
      }
      if due.count == 20 { continue }
      let next = (try? await store.read { db in try MailOutboxRepository.nextDueMs(db) }) ?? nil
      let waitMs = next.map { max(10, min($0 - clock.nowMs(), 30_000)) } ?? 30_000
      await wake.wait(timeoutMs: waitMs)
    }
  }

  private func attempt(_ mail: OutboxMail) async {
    let fields: [String: LogValue] = [
      "project_id": .string(mail.projectID), "request_type": .string(mail.requestType),
      "mail_id": .int(mail.id), "attempt": .int(mail.attempts + 1),
    ]
    do throws(MailDeliveryError) {
      let opened: OutboxMail
      do {
        opened = try OutboxSeal.open(mail, key: masterKey)
      } catch {
        throw MailDeliveryError(permanent: true, "the mail could not be opened: \(error)")
      }
      try await transport.deliver(opened, .internalWork(.mailWorker))
      _ = try? await store.write { db in try MailOutboxRepository.remove(db, id: mail.id) }
      metrics.mailsSent.add(1, ordering: .relaxed)
      logger.info("mail sent", fields)
    } catch {
      let giveUp = error.permanent || mail.attempts + 1 >= maxAttempts
      var logged = fields
      logged["error"] = .string(String(error.message.prefix(300)))
      if giveUp {
        _ = try? await store.write { db in try MailOutboxRepository.remove(db, id: mail.id) }
        metrics.mailsFailed.add(1, ordering: .relaxed)
        logger.error(
          error.permanent ? "mail refused: dropped" : "mail not delivered after every attempt: dropped",
          logged)
      } else {
        let next = clock.nowMs() + backoffMs(afterAttempts: mail.attempts)
        _ = try? await store.write { db in
          try MailOutboxRepository.postpone(db, id: mail.id, nextAttemptAtMs: next, error: error.message)
        }
        metrics.mailsRetried.add(1, ordering: .relaxed)
        logged["retry_at_ms"] = .int(next)
        logger.warning("mail not delivered: retried later", logged)
      }
    }
  }
}

/// A wake-up the worker waits for, with a timeout; a signal with no waiter is kept for
/// the next wait.
final class WakeSignal: Sendable {
  private struct State {
    var pending = false
    var waiter: CheckedContinuation<Void, Never>?
  }
  private let state = Mutex(State())

  func signal() {
    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
      if let waiter = state.waiter {
        state.waiter = nil
        return waiter
      }
      state.pending = true
      return nil
    }
    waiter?.resume()
  }

  func wait(timeoutMs: Int64) async {
    let timer = Task { [self] in
      try? await Task.sleep(for: .milliseconds(timeoutMs))
      if !Task.isCancelled { signal() }
    }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        if state.pending {
          state.pending = false
          return true
        }
        state.waiter = continuation
        return false
      }
      if now { continuation.resume() }
    }
    timer.cancel()
  }
}
