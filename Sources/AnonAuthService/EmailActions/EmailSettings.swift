import AnonAuthWire
import Synchronization

/// How a deployment sends its email actions' mails: set by the daemon (or a test) on
/// `ServiceEnvironment.email`. The mails themselves leave through the outbox and the
/// `MailWorker`.
public struct EmailSettings: Sendable {
  /// The base of every action link (`https://auth.example.com/__/auth/action`): read at
  /// each send, since in --dev the address is known only once the port is bound.
  public var actionURL: @Sendable () -> String = { "http://localhost/__/auth/action" }
  /// The From of mails whose project names no `email_sender`.
  public var defaultSender = "AnonAuth <noreply@localhost>"
  /// The most mails the outbox holds; a send beyond it is refused, retried later.
  public var outboxCapacity: Int64 = 10_000
  /// Whether mails go anywhere (an SMTP server, or the --dev directory); without, sending
  /// is `OPERATION_NOT_ALLOWED` and only administrators' links (`GenerateActionLink`) work.
  public var deliveryConfigured = false
  /// Told that a mail was queued, so the worker need not wait for its next pass.
  public var mailQueued: @Sendable () -> Void = {}
  /// --dev: every code sent, for the emulator's `oobCodes` list; nil elsewhere.
  public var devMailbox: DevMailbox?
  /// Sends per recipient and per account (on top of the call's admission per IP and
  /// project).
  public let recipientLimit = MailRecipientLimit()

  public init() {}
}

/// What the Auth Emulator's `GET /emulator/v1/projects/{project}/oobCodes` lists, kept in
/// memory in --dev only (the newest 1000).
public final class DevMailbox: Sendable {
  public struct Entry: Sendable, Equatable {
    public var projectID: String
    public var email: String
    public var oobCode: String
    public var oobLink: String
    public var requestType: String
  }

  private let entries = Mutex<[Entry]>([])

  public init() {}

  func record(_ entry: Entry) {
    entries.withLock {
      $0.append(entry)
      if $0.count > 1000 { $0.removeFirst($0.count - 1000) }
    }
  }

  /// The codes sent for a project, oldest first.
  public func codes(projectID: String) -> [Entry] {
    entries.withLock { $0.filter { $0.projectID == projectID } }
  }
}

/// Per recipient address and per account: 5 mails at once, then one a minute (a token
/// bucket each, kept as the time its bucket is full again; in memory, per daemon). A
/// refusal is the same whether or not the address has an account.
public final class MailRecipientLimit: Sendable {
  static let intervalUs: Int64 = 60_000_000
  static let burst: Int64 = 5
  private struct State {
    var fullAt: [String: Int64] = [:]
    /// The table is pruned when it reaches this size, which then doubles past what a
    /// prune kept: a table of live entries is not walked again on every send.
    var pruneAt = MailRecipientLimit.minimumPruneAt
  }
  static let minimumPruneAt = 100_000
  private let state = Mutex(State())

  public init() {}

  /// Takes one send from every key's bucket, all or none.
  /// - Throws: `TOO_MANY_ATTEMPTS_TRY_LATER` with `retry_after_seconds`.
  func take(_ keys: [String], nowMs: Int64) throws(RPCError) {
    let nowUs = nowMs * 1000
    let wait: Int64? = state.withLock { state in
      var longest: Int64 = 0
      for key in keys {
        let due = max(state.fullAt[key] ?? nowUs, nowUs)
        let over = due - nowUs - (Self.burst - 1) * Self.intervalUs
        if over > 0 { longest = max(longest, (over + 999_999) / 1_000_000) }
      }
      if longest > 0 { return longest }
      for key in keys { state.fullAt[key] = max(state.fullAt[key] ?? nowUs, nowUs) + Self.intervalUs }
      if state.fullAt.count >= state.pruneAt {
        state.fullAt = state.fullAt.filter { $0.value > nowUs }
        state.pruneAt = max(Self.minimumPruneAt, 2 * state.fullAt.count)
      }
      return nil
    }
    if let wait {
      throw RPCError(
        .tooManyAttempts, "too many mails to this address or account; try again later",
        details: ["retry_after_seconds": String(min(3600, wait))])
    }
  }
}
