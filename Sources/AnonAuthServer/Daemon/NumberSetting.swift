import AnonAuthService
import AnonAuthStore
import AnonAuthWire

/// A whole-number setting with its typed default. Components whose defaults are operator
/// settings (`RPCServerConfig`) take them from here, so a default is written once: in this
/// file, or, where a lower module needs it too (the contract's frame size and call
/// deadline, admission, clean-up), in that module, which this file then names.
public struct NumberSetting: Sendable {
  public let setting: Setting
  public let defaultValue: UInt64

  init(
    _ name: String, _ defaultValue: UInt64, _ unit: SettingUnit, _ range: ClosedRange<UInt64>, _ help: String,
    section: SettingSection
  ) {
    setting = Setting(number: name, defaultValue, unit, range, help, section: section)
    self.defaultValue = defaultValue
  }

  /// The default as an `Int` (every range fits one on a 64-bit platform).
  public var defaultInt: Int { Int(clamping: defaultValue) }
  public var range: ClosedRange<UInt64> { setting.range ?? defaultValue...defaultValue }
}

private let mebibyte: UInt64 = 1 << 20
private let standardAdmission = AdmissionLimits()
private let kibibyte: UInt64 = 1024
private let writerCacheKiB = StoreOptions.writerCacheKiBRange
private let writerCacheBytesRange =
  UInt64(writerCacheKiB.lowerBound) * kibibyte...UInt64(writerCacheKiB.upperBound) * kibibyte

extension NumberSetting {
  static let ioThreads = NumberSetting(
    "io-threads", 1, .count, 1...64, "event-loop threads for RPC connections", section: .general)

  // Transport limits (RPCServerConfig).
  static let maxFrameSize = NumberSetting(
    "max-frame-size", UInt64(ProtocolDefaults.maxFrameSize), .bytes, 1024...(64 * mebibyte),
    "largest frame accepted, in bytes", section: .transport)
  static let maxUnauthenticatedFrameSize = NumberSetting(
    "max-unauthenticated-frame-size", 64 * 1024, .bytes, 1024...(64 * mebibyte),
    "largest frame accepted on a connection before one of its calls passed the admin key check",
    section: .transport)
  static let maxBufferedBytes = NumberSetting(
    "max-buffered-bytes", 256 * mebibyte, .bytes, mebibyte...(1 << 40),
    "bytes of partly received frames and running calls' payloads the process holds at most; "
      + "a connection over it gets GoAway RESOURCE_EXHAUSTED", section: .transport)
  static let maxBufferedBytesPerIP = NumberSetting(
    "max-buffered-bytes-per-ip", 32 * mebibyte, .bytes, mebibyte...(1 << 40),
    "the same per client IP (at least twice --max-frame-size); --trusted-proxies count only in "
      + "--max-buffered-bytes", section: .transport)
  static let maxConcurrentCalls = NumberSetting(
    "max-concurrent-calls", 128, .count, 1...100_000,
    "calls per connection whose handler has not returned (expired ones too) before TOO_MANY_CALLS",
    section: .transport)
  static let maxConnections = NumberSetting(
    "max-connections", 10_000, .count, 1...10_000_000,
    "open RPC connections at most (lowered to fit the descriptor limit); more are closed on accept",
    section: .transport)
  static let maxConnectionsPerIP = NumberSetting(
    "max-connections-per-ip", 256, .count, 1...10_000_000,
    "open RPC connections per client IP; --trusted-proxies are exempt", section: .transport)
  static let maxConnectionRatePerIP = NumberSetting(
    "max-connection-rate-per-ip", 64, .perSecond, 0...10_000_000,
    "new RPC connections a second per client IP, after a burst of --max-connections-per-ip; 0: off",
    section: .transport)
  static let maxCallLogLinesPerSecond = NumberSetting(
    "max-call-log-lines-per-second", 1_000, .perSecond, 0...10_000_000,
    "call log lines written a second, after a burst of twice as many; the lines over it are counted (anonauth_call_log_lines_suppressed_total, and a suppressed count on the next line written); 0: off",
    section: .transport)

  // Timeouts (RPCServerConfig).
  static let handshakeTimeoutMs = NumberSetting(
    "handshake-timeout-ms", 10_000, .milliseconds, 1...3_600_000, "a TLS handshake must finish within this",
    section: .timeouts)
  static let frameTimeoutMs = NumberSetting(
    "frame-timeout-ms", 30_000, .milliseconds, 1...3_600_000,
    "a frame that has started must be complete within this", section: .timeouts)
  static let idleTimeoutMs = NumberSetting(
    "idle-timeout-ms", 300_000, .milliseconds, 1...86_400_000, "idle connections are closed after this",
    section: .timeouts)
  static let callTimeoutMs = NumberSetting(
    "call-timeout-ms", UInt64(ProtocolDefaults.callTimeoutMs), .milliseconds, 1...3_600_000,
    "a call's deadline when it sets none",
    section: .timeouts)
  static let minCallTimeoutMs = NumberSetting(
    "min-call-timeout-ms", 50, .milliseconds, 1...60_000, "a call's timeout_ms below this is raised to it",
    section: .timeouts)
  static let shutdownGraceMs = NumberSetting(
    "shutdown-grace-ms", 20_000, .milliseconds, 0...3_600_000,
    "on SIGTERM, how long calls in flight may take",
    section: .timeouts)

  // Email actions' mails (MailWorker, SMTPClient).
  static let mailRetryBaseMs = NumberSetting(
    "mail-retry-base-ms", 5_000, .milliseconds, 100...3_600_000,
    "the wait before a mail's second attempt after a temporary failure; it doubles each attempt, up to an "
      + "hour, 12 attempts in all", section: .email)
  static let smtpTimeoutMs = NumberSetting(
    "smtp-timeout-ms", 30_000, .milliseconds, 1_000...600_000,
    "the deadline of one SMTP exchange (connect, TLS, AUTH, the mail)", section: .email)

  static let clusterElectionTimeoutMs = NumberSetting(
    "cluster-election-timeout-ms", UInt64(ClusterConfig.defaultElectionTimeoutMs), .milliseconds,
    150...60_000,
    "replicated store: how long a follower hears nothing from the leader before it stands for election "
      + "(each waits a random time between this and twice this; the leader's heartbeat is a tenth of it); "
      + "the same on every node", section: .cluster)

  // Clean-up (CleanupWorker) and the store's writer (StoreOptions).
  static let cleanupIntervalMs = NumberSetting(
    "cleanup-interval-ms", UInt64(CleanupWorker.defaultIntervalMs), .milliseconds, 100...86_400_000,
    "how often the clean-up worker deletes anonymous accounts that are due", section: .cleanup)
  static let cleanupBatchSize = NumberSetting(
    "cleanup-batch-size", UInt64(CleanupWorker.defaultBatchSize), .count, 1...10_000,
    "at most this many accounts deleted per clean-up write job", section: .cleanup)
  static let cleanupJobBudgetUs = NumberSetting(
    "cleanup-job-budget-us", UInt64(CleanupWorker.defaultJobBudgetMicroseconds), .microseconds,
    50...10_000_000,
    "how long one clean-up write job may hold the writer (microseconds); a scheduled pass rests twice as "
      + "long between jobs", section: .cleanup)
  /// `StoreOptions.writerCacheKiB`, in bytes.
  static let writerCacheBytes = NumberSetting(
    "writer-cache-bytes", UInt64(StoreOptions.defaultWriterCacheKiB) * 1024, .bytes, writerCacheBytesRange,
    "the store writer's SQLite page cache, in bytes (allocated as pages are read): room for the interior "
      + "pages of a large store's B-trees, which every write searches from the root", section: .cleanup)
  /// The daemon's default, not `StoreOptions`' (0, never waits: what tests and tools that
  /// open a store want).
  static let commitDelayUs = NumberSetting(
    "commit-delay-us", 1000, .microseconds, 0...100_000,
    "while writes stream in, how long a small batch may wait for more to share its commit (microseconds); "
      + "0: never", section: .cleanup)

  // Fair admission of expensive work per end-user IP key (IPv4 address, IPv6 /64) and per
  // project (AdmissionLimits, whose defaults these are): rates a second after a burst of
  // ten seconds' worth.
  static let passwordRatePerIP = NumberSetting(
    "password-rate-per-ip", UInt64(standardAdmission.password.perIP), .perSecond, 0...1_000_000,
    "password hashes/checks a second per end-user IP; 0: off", section: .admission)
  static let passwordRatePerProject = NumberSetting(
    "password-rate-per-project", UInt64(standardAdmission.password.perProject), .perSecond, 0...1_000_000,
    "password hashes/checks a second per project; 0: off", section: .admission)
  static let signingRatePerIP = NumberSetting(
    "signing-rate-per-ip", UInt64(standardAdmission.signing.perIP), .perSecond, 0...1_000_000,
    "ID tokens signed a second per end-user IP (sign-up, sign-in, refresh, link); 0: off", section: .admission
  )
  static let signingRatePerProject = NumberSetting(
    "signing-rate-per-project", UInt64(standardAdmission.signing.perProject), .perSecond, 0...1_000_000,
    "ID tokens signed a second per project (sign-up, sign-in, refresh, link); 0: off", section: .admission)
  static let writeRatePerIP = NumberSetting(
    "write-rate-per-ip", UInt64(standardAdmission.write.perIP), .perSecond, 0...1_000_000,
    "end users' store writes a second per end-user IP (sign-up, sign-in, refresh, link); 0: off",
    section: .admission)
  static let writeRatePerProject = NumberSetting(
    "write-rate-per-project", UInt64(standardAdmission.write.perProject), .perSecond, 0...1_000_000,
    "end users' store writes a second per project (sign-up, sign-in, refresh, link); 0: off",
    section: .admission)
  static let admissionIPSharePercent = NumberSetting(
    "admission-ip-share-percent", UInt64(standardAdmission.ipSharePercent), .percent, 1...100,
    "percent of the password pool's, signing pool's and writer's places one end-user IP may hold; 100: off",
    section: .admission)
  static let admissionProjectSharePercent = NumberSetting(
    "admission-project-share-percent", UInt64(standardAdmission.projectSharePercent), .percent, 1...100,
    "percent of the password pool's, signing pool's and writer's places one project may hold; 100: off",
    section: .admission)
}
