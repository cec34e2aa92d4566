/// One daemon setting: its flag, its `ANONAUTH_*` variable, its default and its help.
/// The table in `Setting.all` is the single source for parsing, `--help` and
/// `--print-config`.
public struct Setting: Sendable {
  public let name: String
  public let defaultValue: String?
  public let help: String
  /// A switch takes no value on the command line (`--dev`); in the environment or the
  /// JSON file it is "true"/"false".
  public let isSwitch: Bool
  /// Shown masked by `--print-config`. No setting today holds a secret itself: the master
  /// key, the TLS private key and the admin key are passed as files (which deployments
  /// mount from their secret stores), so the effective configuration, which names only
  /// their paths, can be printed and shared. A setting that ever carries a secret inline
  /// must set this.
  public let isSecret: Bool

  public var flag: String { "--\(name)" }
  public var environmentName: String {
    "ANONAUTH_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
  }

  init(
    _ name: String, _ defaultValue: String?, _ help: String, isSwitch: Bool = false, isSecret: Bool = false
  ) {
    self.name = name
    self.defaultValue = defaultValue
    self.help = help
    self.isSwitch = isSwitch
    self.isSecret = isSecret
  }

  public static let all: [Setting] = [
    Setting("data-dir", "./anonauth-data", "where the store, keys and dev files live (made 0700 if missing)"),
    Setting("listen", "127.0.0.1:7443", "RPC over TLS, HOST:PORT (port 0 picks one)"),
    Setting(
      "ops-listen", "127.0.0.1:7080", "plain-HTTP ops port: /healthz /readyz /metrics (port 0 picks one)"),
    Setting("tls-cert", nil, "PEM certificate chain; in --dev a self-signed one is made in the data dir"),
    Setting("tls-key", nil, "PEM private key of --tls-cert"),
    Setting("issuer-prefix", "https://anonauth.local/", "ID token iss prefix; the project id follows"),
    Setting(
      "master-key-file", nil, "32-byte key that encrypts signing keys at rest; in --dev made in the data dir"),
    Setting(
      "admin-key-file", nil,
      "a file holding an admin key you chose (openssl rand -hex 32): its hash is stored as the admin key "
        + "labelled admin-key-file; a new file rotates it"),
    Setting("trusted-proxies", "", "comma-separated CIDRs whose x-end-user-ip is believed"),
    Setting(
      "outbound-ca-file", nil,
      "PEM CAs trusted for outbound HTTPS (provider keys, Facebook Graph API); default: the system CA store"),
    Setting(
      "client-ca-file", nil,
      "mutual TLS: PEM CAs of service callers' client certificates (a verified one is a trusted caller)"),
    Setting(
      "admin-requires-client-cert", "false", "AdminService calls need a verified client certificate too",
      isSwitch: true),
    Setting(
      "dev", "false", "development mode: self-signed TLS, generated master key, demo-project", isSwitch: true),
    Setting(
      "config", nil, "a JSON file of settings, keyed by flag name without dashes' prefix (\"data-dir\")"),
    Setting("log-level", "info", "debug, info, warn or error"),
    Setting("io-threads", "1", "event-loop threads for RPC connections"),
    Setting("max-frame-size", "4194304", "largest frame accepted, in bytes"),
    Setting(
      "max-unauthenticated-frame-size", "65536",
      "largest frame accepted on a connection before one of its calls passed the admin key check"),
    Setting(
      "max-buffered-bytes", "268435456",
      "bytes of partly received frames and running calls' payloads the process holds at most; a connection over it gets GoAway RESOURCE_EXHAUSTED"
    ),
    Setting(
      "max-buffered-bytes-per-ip", "33554432",
      "the same per client IP (at least twice --max-frame-size); --trusted-proxies count only in --max-buffered-bytes"
    ),
    Setting(
      "max-concurrent-calls", "128",
      "calls per connection whose handler has not returned (expired ones too) before TOO_MANY_CALLS"),
    Setting(
      "max-connections", "10000",
      "open RPC connections at most (lowered to fit the descriptor limit); more are closed on accept"),
    Setting(
      "max-connections-per-ip", "256", "open RPC connections per client IP; --trusted-proxies are exempt"),
    Setting(
      "max-connection-rate-per-ip", "64",
      "new RPC connections a second per client IP, after a burst of --max-connections-per-ip; 0: off"),
    Setting("handshake-timeout-ms", "10000", "a TLS handshake must finish within this"),
    Setting("frame-timeout-ms", "30000", "a frame that has started must be complete within this"),
    Setting("idle-timeout-ms", "300000", "idle connections are closed after this"),
    Setting("call-timeout-ms", "30000", "a call's deadline when it sets none"),
    Setting("min-call-timeout-ms", "50", "a call's timeout_ms below this is raised to it"),
    Setting("shutdown-grace-ms", "20000", "on SIGTERM, how long calls in flight may take"),
    Setting(
      "cleanup-interval-ms", "60000", "how often the clean-up worker deletes anonymous accounts that are due"),
    Setting("cleanup-batch-size", "500", "at most this many accounts deleted per clean-up write job"),
    Setting(
      "cleanup-job-budget-us", "500",
      "how long one clean-up write job may hold the writer (microseconds); a scheduled pass rests twice as long between jobs"
    ),
    Setting(
      "commit-delay-us", "1000",
      "while writes stream in, how long a small batch may wait for more to share its commit (microseconds); 0: never"
    ),
    // Fair admission of expensive work per end-user IP key (IPv4 address, IPv6 /64) and
    // per project (AdmissionLimits): rates a second after a burst of ten seconds' worth.
    Setting("password-rate-per-ip", "2", "password hashes/checks a second per end-user IP; 0: off"),
    Setting("password-rate-per-project", "100", "password hashes/checks a second per project; 0: off"),
    Setting(
      "signing-rate-per-ip", "20",
      "ID tokens signed a second per end-user IP (sign-up, sign-in, refresh, link); 0: off"),
    Setting(
      "signing-rate-per-project", "2000",
      "ID tokens signed a second per project (sign-up, sign-in, refresh, link); 0: off"),
    Setting(
      "write-rate-per-ip", "20",
      "end users' store writes a second per end-user IP (sign-up, sign-in, refresh, link); 0: off"),
    Setting(
      "write-rate-per-project", "2000",
      "end users' store writes a second per project (sign-up, sign-in, refresh, link); 0: off"),
    Setting(
      "admission-ip-share-percent", "12",
      "percent of the password pool's, signing pool's and writer's places one end-user IP may hold; 100: off"),
    Setting(
      "admission-project-share-percent", "50",
      "percent of the password pool's, signing pool's and writer's places one project may hold; 100: off"),
    Setting(
      "cluster-id", nil,
      "replicated store: this node's id in the dqlite cluster, for ever (1 bootstraps a new cluster); "
        + "unset, the store is the single file"),
    Setting("cluster-listen", nil, "replicated store: HOST:PORT this node's dqlite listens on"),
    Setting(
      "cluster-advertise", nil,
      "replicated store: HOST:PORT other nodes reach this one on (default: --cluster-listen)"),
    Setting(
      "cluster-join", "", "replicated store: comma-separated HOST:PORT of nodes already in the cluster"),
    Setting(
      "cluster-recover", nil,
      "recovery after a lost majority: ID=HOST:PORT,... the surviving members; rewrites this node's "
        + "membership to them and exits (every node stopped first; see the README's runbook)"),
    Setting(
      "test-hooks", "false", "testing only: adds anonauth.test.TestService/Sleep (never in production)",
      isSwitch: true),
  ]
}
