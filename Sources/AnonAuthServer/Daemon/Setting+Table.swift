extension Setting {
  /// Every setting, in the order `--help` and `--print-config` list them. Numbers are
  /// declared in `NumberSetting` (with their typed defaults) and listed here.
  public static let all: [Setting] = [
    Setting(
      "data-dir", "./anonauth-data", "where the store, keys and dev files live (made 0700 if missing)"),
    Setting("listen", "127.0.0.1:7443", "RPC over TLS, HOST:PORT (port 0 picks one)"),
    Setting(
      "ops-listen", "127.0.0.1:7080", "plain-HTTP ops port: /healthz /readyz /metrics (port 0 picks one)"),
    Setting(
      "firebase-emulator-listen", "",
      "development: plain-HTTP Firebase API in the Auth Emulator's URL layout, HOST:PORT on a loopback "
        + "address only (127.0.0.0/8, ::1, localhost; port 0 picks one); empty: off"),
    Setting(
      "tls-cert", nil, "PEM certificate chain; in --dev a self-signed one is made in the data dir",
      section: .security),
    Setting("tls-key", nil, "PEM private key of --tls-cert", section: .security),
    Setting(
      "issuer-prefix", "https://anonauth.local/",
      "ID token iss prefix; the project id follows (used when --public-url is empty)"),
    Setting(
      "public-url", "",
      "the HTTPS address clients reach the RPC port at (https://auth.example.com, a path may follow): "
        + "each project's token issuer is <public-url>/<project>, with its OpenID discovery document, "
        + "JWKS and x509 keys served on the RPC port (docs/verifying-tokens.md); empty: iss is "
        + "--issuer-prefix + project, except in --dev without --issuer-prefix, where it is "
        + "https://<the RPC port's address>"),
    Setting(
      "master-key-file", nil, "32-byte key that encrypts signing keys at rest; in --dev made in the data dir",
      section: .security),
    Setting(
      "admin-key-file", nil,
      "a file holding an admin key you chose (openssl rand -hex 32): its hash is stored as the admin key "
        + "labelled admin-key-file; a new file rotates it", section: .security),
    Setting(
      "trusted-proxies", "", "comma-separated CIDRs whose x-end-user-ip is believed", section: .security),
    Setting(
      "outbound-ca-file", nil,
      "PEM CAs trusted for outbound HTTPS (provider keys, Facebook Graph API); default: the system CA store",
      section: .security),
    Setting(
      "client-ca-file", nil,
      "mutual TLS: PEM CAs of service callers' client certificates (a verified one is a trusted caller)",
      section: .security),
    Setting(
      "admin-requires-client-cert", "false", "AdminService calls need a verified client certificate too",
      section: .security, isSwitch: true),
    Setting(
      "dev", "false", "development mode: self-signed TLS, generated master key, demo-project", isSwitch: true),
    Setting(
      "config", nil, "a JSON file of settings, keyed by flag name without dashes' prefix (\"data-dir\")"),
    Setting("log-level", "info", "debug, info, warn or error"),
    NumberSetting.ioThreads.setting,
    NumberSetting.maxFrameSize.setting,
    NumberSetting.maxUnauthenticatedFrameSize.setting,
    NumberSetting.maxBufferedBytes.setting,
    NumberSetting.maxBufferedBytesPerIP.setting,
    NumberSetting.maxConcurrentCalls.setting,
    NumberSetting.maxConnections.setting,
    NumberSetting.maxConnectionsPerIP.setting,
    NumberSetting.maxConnectionRatePerIP.setting,
    NumberSetting.maxCallLogLinesPerSecond.setting,
    NumberSetting.handshakeTimeoutMs.setting,
    NumberSetting.frameTimeoutMs.setting,
    NumberSetting.idleTimeoutMs.setting,
    NumberSetting.callTimeoutMs.setting,
    NumberSetting.minCallTimeoutMs.setting,
    NumberSetting.shutdownGraceMs.setting,
    NumberSetting.cleanupIntervalMs.setting,
    NumberSetting.cleanupBatchSize.setting,
    NumberSetting.cleanupJobBudgetUs.setting,
    Setting(
      "uid-order", "random",
      "how new uids are made: random (Firebase's: 28 characters from the CSPRNG) or creation (the first 6 "
        + "are the second the account was made, in base 62, the other 22 random: the store keeps accounts "
        + "in the order they were made, so a large store's sign-ups append and its clean-up deletes "
        + "neighbours; a uid then tells when its account was made)"),
    NumberSetting.commitDelayUs.setting,
    NumberSetting.writerCacheBytes.setting,
    NumberSetting.passwordRatePerIP.setting,
    NumberSetting.passwordRatePerProject.setting,
    NumberSetting.signingRatePerIP.setting,
    NumberSetting.signingRatePerProject.setting,
    NumberSetting.writeRatePerIP.setting,
    NumberSetting.writeRatePerProject.setting,
    NumberSetting.admissionIPSharePercent.setting,
    NumberSetting.admissionProjectSharePercent.setting,
    Setting(
      "cluster-id", nil,
      "replicated store: this node's id in the dqlite cluster, for ever (1 bootstraps a new cluster); "
        + "unset, the store is the single file", section: .cluster),
    Setting(
      "cluster-listen", nil,
      "replicated store: HOST:PORT of the cluster port (mutual TLS in front of this node's dqlite)",
      section: .cluster),
    Setting(
      "cluster-advertise", nil,
      "replicated store: HOST:PORT other nodes reach this one on (default: --cluster-listen)",
      section: .cluster),
    Setting(
      "cluster-join", "", "replicated store: comma-separated HOST:PORT of nodes already in the cluster",
      section: .cluster),
    NumberSetting.clusterElectionTimeoutMs.setting,
    Setting(
      "cluster-ca-file", nil,
      "replicated store: PEM cluster CA(s); a peer whose certificate chains to one is a member (mutual TLS "
        + "on --cluster-listen); in --dev one is derived from the master key", section: .cluster),
    Setting(
      "cluster-cert-file", nil,
      "replicated store: PEM certificate this node presents to the others (and as client)",
      section: .cluster),
    Setting(
      "cluster-key-file", nil, "replicated store: PEM private key of --cluster-cert-file", section: .cluster),
    Setting(
      "cluster-insecure", "false",
      "replicated store: no TLS on --cluster-listen (plaintext, no authentication; logs a warning at every "
        + "start)", section: .cluster, isSwitch: true),
    Setting(
      "cluster-recover", nil,
      "recovery after a lost majority: ID=HOST:PORT,... the surviving members; rewrites this node's "
        + "membership to them and exits (every node stopped first; see docs/replicated-store.md, Runbook)",
      section: .cluster),
    Setting(
      "smtp-url", "",
      "email actions' mail server: smtp://HOST[:PORT] (STARTTLS, port 587; plain text only to a loopback "
        + "relay) or smtps://HOST[:PORT] (implicit TLS, port 465); the certificate must chain to "
        + "--smtp-ca-file (default: the system CAs) and name HOST; empty: in --dev mails are written to "
        + "DATA_DIR/mail and their links logged, otherwise email actions answer OPERATION_NOT_ALLOWED",
      section: .email),
    Setting(
      "smtp-credentials-file", nil,
      "a file (0600) whose first line is USER:PASSWORD for AUTH PLAIN or LOGIN (sent only over TLS)",
      section: .email),
    Setting("smtp-ca-file", nil, "PEM CAs trusted for the SMTP server's certificate", section: .email),
    Setting(
      "smtp-from", "AnonAuth <noreply@localhost>",
      "the From of mails whose project sets no email_sender (\"Name <address>\")", section: .email),
    Setting(
      "email-action-url", "",
      "the page email links lead to (it reads mode, oobCode, apiKey and continueUrl from the query); empty: "
        + "<--public-url>/__/auth/action, or the emulator listener's /emulator/action, or "
        + "http://localhost/__/auth/action", section: .email),
    NumberSetting.mailRetryBaseMs.setting,
    NumberSetting.smtpTimeoutMs.setting,
    Setting(
      "test-hooks", "false", "testing only: adds anonauth.test.TestService/Sleep (never in production)",
      section: .testing, isSwitch: true),
  ]
}
