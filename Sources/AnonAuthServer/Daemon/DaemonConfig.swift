import AnonAuthDqlite
import AnonAuthNet
import AnonAuthService
import Foundation

/// The daemon's effective settings, resolved flag > `ANONAUTH_*` environment > JSON
/// file (`--config`) > default, and validated before anything starts.
public struct DaemonConfig: Sendable {
  public var dataDir: String
  public var listen: SocketAddress
  public var opsListen: SocketAddress
  public var tlsCert: String?
  public var tlsKey: String?
  public var clientCAFile: String?
  public var adminRequiresClientCertificate: Bool
  public var issuerPrefix: String
  /// `--public-url` without its trailing slash; nil when empty. In `--dev` with neither it
  /// nor `--issuer-prefix` given, `devPublicURL` makes one from the RPC port's address.
  public var publicURL: String?
  /// `--dev` with neither `--public-url` nor `--issuer-prefix` set: the daemon's issuer is
  /// its own RPC address (`IssuerURL.dev`), so OIDC libraries find its keys out of the box.
  public var publicURLFromListenAddress: Bool
  public var masterKeyFile: String?
  public var adminKeyFile: String?
  public var trustedProxies: [String]
  /// CAs for outbound HTTPS (identity providers); nil: the system's CA store.
  public var outboundCAFile: String?
  /// Email actions' delivery (`--smtp-url` and its companions).
  public var mail: MailConfig
  public var dev: Bool
  public var testHooks: Bool
  public var cleanupIntervalMs: Int64
  public var cleanupBatchSize: Int
  public var cleanupJobBudgetMicroseconds: Int
  /// How long the store's writer may hold a small batch for more writes while they
  /// stream in (`StoreOptions.commitDelayMicroseconds`).
  public var commitDelayMicroseconds: Int
  /// The store writer's page cache (`StoreOptions.writerCacheKiB`), in KiB.
  public var writerCacheKiB: Int
  /// Fair admission of password hashing, signing and writes per IP and project.
  public var admission: AdmissionLimits
  public var logLevel: Logger.Level
  /// How new uids are made (`--uid-order`).
  public var uidOrder: UIDOrder
  public var rpc: RPCServerConfig
  /// Set, the store is replicated on a dqlite cluster this daemon's node belongs to.
  public var cluster: ClusterConfig?
  /// `--cluster-recover`: the members to force on this node's Raft configuration, then exit.
  public var clusterRecover: [(id: UInt64, address: String)]?
  /// Every setting's resolved text, for `--print-config`.
  public let resolved: [(setting: Setting, value: String?, source: String)]

  /// What the command line asked for besides running.
  public enum Action: Sendable { case run, help, printConfig }

  /// Parses and validates. `arguments` excludes the program name.
  /// - Throws: `ConfigError` with one line saying what is wrong.
  public static func resolve(
    arguments: [String], environment: [String: String]
  ) throws(ConfigError) -> (DaemonConfig, Action) {
    var flags: [String: String] = [:]
    var action = Action.run
    let byName = Dictionary(uniqueKeysWithValues: Setting.all.map { ($0.name, $0) })
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "--help" || argument == "-h" {
        action = .help
        continue
      }
      if argument == "--print-config" {
        action = .printConfig
        continue
      }
      guard argument.hasPrefix("--") else { throw ConfigError("unexpected argument \"\(argument)\"") }
      var name = String(argument.dropFirst(2))
      var value: String?
      if let eq = name.firstIndex(of: "=") {
        value = String(name[name.index(after: eq)...])
        name = String(name[..<eq])
      }
      guard let setting = byName[name] else { throw ConfigError("unknown flag --\(name) (see --help)") }
      if setting.isSwitch {
        flags[name] = value ?? "true"
      } else {
        if value == nil {
          guard index < arguments.count else { throw ConfigError("--\(name) needs a value") }
          value = arguments[index]
          index += 1
        }
        flags[name] = value
      }
    }

    var file: [String: String] = [:]
    let configPath = flags["config"] ?? environment["ANONAUTH_CONFIG"]
    if let configPath { file = try loadFile(configPath, known: byName) }

    var resolved: [(setting: Setting, value: String?, source: String)] = []
    var values: [String: String] = [:]
    for setting in Setting.all {
      let pick: (String?, String) =
        if let v = flags[setting.name] { (v, "flag") } else if let v = environment[setting.environmentName] {
          (v, "env")
        } else if let v = file[setting.name] { (v, "file") } else { (setting.defaultValue, "default") }
      resolved.append((setting, pick.0, pick.1))
      if let v = pick.0 { values[setting.name] = v }
    }
    return (try DaemonConfig(values: values, resolved: resolved), action)
  }

  private static func loadFile(_ path: String, known: [String: Setting]) throws(ConfigError) -> [String:
    String]
  {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ConfigError("config file \(path): cannot read it")
    }
    guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      throw ConfigError("config file \(path): not a JSON object")
    }
    var out: [String: String] = [:]
    for (key, value) in object {
      guard known[key] != nil, key != "config" else {
        throw ConfigError("config file \(path): unknown setting \"\(key)\"")
      }
      switch value {
      case let s as String: out[key] = s
      case let b as Bool: out[key] = b ? "true" : "false"
      case let n as NSNumber: out[key] = n.stringValue
      default: throw ConfigError("config file \(path): \"\(key)\" must be a string, number or boolean")
      }
    }
    return out
  }

  private init(values: [String: String], resolved: [(setting: Setting, value: String?, source: String)])
    throws(ConfigError)
  {
    func text(_ name: String) -> String { values[name] ?? "" }
    func bool(_ name: String) throws(ConfigError) -> Bool {
      switch text(name).lowercased() {
      case "true", "1", "yes", "on": return true
      case "false", "0", "no", "off", "": return false
      default: throw ConfigError("--\(name): expected true or false, got \"\(text(name))\"")
      }
    }
    /// A number in the range its declaration gives (`NumberSetting`).
    func number(_ setting: NumberSetting) throws(ConfigError) -> UInt64 {
      let name = setting.setting.name
      let range = setting.range
      guard let n = UInt64(text(name)), range.contains(n) else {
        throw ConfigError(
          "--\(name): expected a whole number in \(range.lowerBound)...\(range.upperBound), got \"\(text(name))\""
        )
      }
      return n
    }
    func int(_ setting: NumberSetting) throws(ConfigError) -> Int { Int(clamping: try number(setting)) }
    func address(_ name: String) throws(ConfigError) -> SocketAddress {
      do {
        return try SocketAddress(parsing: text(name))
      } catch {
        throw ConfigError("--\(name): \(error.description)")
      }
    }

    self.resolved = resolved
    dataDir = text("data-dir")
    if dataDir.isEmpty { throw ConfigError("--data-dir: must not be empty") }
    listen = try address("listen")
    opsListen = try address("ops-listen")
    tlsCert = values["tls-cert"].flatMap { $0.isEmpty ? nil : $0 }
    tlsKey = values["tls-key"].flatMap { $0.isEmpty ? nil : $0 }
    clientCAFile = values["client-ca-file"].flatMap { $0.isEmpty ? nil : $0 }
    adminRequiresClientCertificate = try bool("admin-requires-client-cert")
    if adminRequiresClientCertificate && clientCAFile == nil {
      throw ConfigError("--admin-requires-client-cert needs --client-ca-file")
    }
    issuerPrefix = text("issuer-prefix")
    guard issuerPrefix.hasPrefix("https://") || issuerPrefix.hasPrefix("http://") else {
      throw ConfigError("--issuer-prefix: expected an http(s) URL, got \"\(issuerPrefix)\"")
    }
    publicURL = try IssuerURL.parsePublicURL(text("public-url"))
    let issuerPrefixGiven = resolved.contains { $0.setting.name == "issuer-prefix" && $0.source != "default" }
    let devMode = try bool("dev")
    publicURLFromListenAddress = publicURL == nil && !issuerPrefixGiven && devMode
    masterKeyFile = values["master-key-file"].flatMap { $0.isEmpty ? nil : $0 }
    adminKeyFile = values["admin-key-file"].flatMap { $0.isEmpty ? nil : $0 }
    trustedProxies = text("trusted-proxies").split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces)
    }.filter { !$0.isEmpty }
    outboundCAFile = values["outbound-ca-file"].flatMap { $0.isEmpty ? nil : $0 }
    if let outboundCAFile, !FileManager.default.isReadableFile(atPath: outboundCAFile) {
      throw ConfigError("--outbound-ca-file: cannot read \(outboundCAFile)")
    }
    dev = try bool("dev")
    testHooks = try bool("test-hooks")
    mail = try MailConfig(
      values, retryBaseMs: Int64(try number(.mailRetryBaseMs)), timeoutMs: try int(.smtpTimeoutMs))
    switch text("log-level") {
    case "debug": logLevel = .debug
    case "info": logLevel = .info
    case "warn", "warning": logLevel = .warning
    case "error": logLevel = .error
    default:
      throw ConfigError("--log-level: expected debug, info, warn or error, got \"\(text("log-level"))\"")
    }
    guard let uidOrder = UIDOrder(rawValue: text("uid-order")) else {
      throw ConfigError("--uid-order: expected random or creation, got \"\(text("uid-order"))\"")
    }
    self.uidOrder = uidOrder
    var rpc = RPCServerConfig(listen: listen)
    rpc.emulatorListen = try Self.emulatorListen(text("firebase-emulator-listen"))
    rpc.ioThreads = try int(.ioThreads)
    rpc.maxFrameSize = try int(.maxFrameSize)
    rpc.maxConcurrentCallsPerConnection = try int(.maxConcurrentCalls)
    rpc.maxUnauthenticatedFrameSize = try int(.maxUnauthenticatedFrameSize)
    rpc.maxBufferedBytes = try int(.maxBufferedBytes)
    rpc.maxBufferedBytesPerIP = try int(.maxBufferedBytesPerIP)
    // One frame of the largest size (and the start of the next) must fit, or an admin
    // import of a full frame could never be received.
    guard rpc.maxBufferedBytesPerIP >= 2 * rpc.maxFrameSize else {
      throw ConfigError(
        "--max-buffered-bytes-per-ip: at least twice --max-frame-size (\(2 * rpc.maxFrameSize))")
    }
    guard rpc.maxBufferedBytes >= rpc.maxBufferedBytesPerIP else {
      throw ConfigError(
        "--max-buffered-bytes: at least --max-buffered-bytes-per-ip (\(rpc.maxBufferedBytesPerIP))")
    }
    rpc.maxConnections = try int(.maxConnections)
    rpc.maxConnectionsPerIP = try int(.maxConnectionsPerIP)
    rpc.maxConnectionRatePerIP = try int(.maxConnectionRatePerIP)
    rpc.maxCallLogLinesPerSecond = try int(.maxCallLogLinesPerSecond)
    // A bad entry is reported where the whole list is parsed (Daemon.run).
    if case .success(let policy) = EndUserIPPolicy.parse(trustedProxies) {
      rpc.perIPExempt = policy.trustedProxies
    }
    rpc.handshakeTimeoutMs = try number(.handshakeTimeoutMs)
    rpc.partialFrameTimeoutMs = try number(.frameTimeoutMs)
    rpc.idleTimeoutMs = try number(.idleTimeoutMs)
    rpc.defaultCallTimeoutMs = try number(.callTimeoutMs)
    rpc.minCallTimeoutMs = try number(.minCallTimeoutMs)
    rpc.shutdownGraceMs = try number(.shutdownGraceMs)
    self.rpc = rpc
    cleanupIntervalMs = Int64(try number(.cleanupIntervalMs))
    cleanupBatchSize = try int(.cleanupBatchSize)
    cleanupJobBudgetMicroseconds = try int(.cleanupJobBudgetUs)
    commitDelayMicroseconds = try int(.commitDelayUs)
    writerCacheKiB = try int(.writerCacheBytes) / 1024
    var admission = AdmissionLimits()
    admission.password = .init(
      perIP: try int(.passwordRatePerIP), perProject: try int(.passwordRatePerProject))
    admission.signing = .init(perIP: try int(.signingRatePerIP), perProject: try int(.signingRatePerProject))
    admission.write = .init(perIP: try int(.writeRatePerIP), perProject: try int(.writeRatePerProject))
    admission.ipSharePercent = try int(.admissionIPSharePercent)
    admission.projectSharePercent = try int(.admissionProjectSharePercent)
    self.admission = admission

    // Checked even unclustered: a bad value is refused wherever it is given.
    let electionTimeoutMs = try int(.clusterElectionTimeoutMs)
    cluster = try Self.cluster(values)
    cluster?.electionTimeoutMs = electionTimeoutMs
    let clusterTLS = try Self.clusterTLS(values, dev: dev, clustered: cluster != nil)
    if let clusterTLS { cluster?.tls = clusterTLS }
    if let text = values["cluster-recover"], !text.isEmpty {
      guard cluster != nil else {
        throw ConfigError("--cluster-recover needs --cluster-id and --cluster-listen")
      }
      var members: [(id: UInt64, address: String)] = []
      for entry in text.split(separator: ",") {
        let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let id = UInt64(parts[0]), id > 0, DqliteNode.isValidAddress(parts[1]) else {
          throw ConfigError("--cluster-recover: expected ID=HOST:PORT,..., got \"\(entry)\"")
        }
        members.append((id, parts[1]))
      }
      guard members.contains(where: { $0.id == cluster?.id }) else {
        throw ConfigError("--cluster-recover: the members must include this node (--cluster-id)")
      }
      clusterRecover = members
    }
    if cluster != nil && masterKeyFile == nil {
      throw ConfigError("--cluster-id needs --master-key-file (the same key on every node), even with --dev")
    }

    if (tlsCert == nil) != (tlsKey == nil) {
      throw ConfigError("--tls-cert and --tls-key go together")
    }
    if !dev {
      if tlsCert == nil { throw ConfigError("--tls-cert and --tls-key are required without --dev") }
      if masterKeyFile == nil { throw ConfigError("--master-key-file is required without --dev") }
    }
  }

  /// The cluster port's protection: the three files together, or `--cluster-insecure`, or
  /// (with `--dev` only) certificates made from the master key. Nil when not clustered.
  private static func clusterTLS(
    _ values: [String: String], dev: Bool, clustered: Bool
  ) throws(ConfigError) -> ClusterTLSSettings? {
    func given(_ name: String) -> String? { values[name].flatMap { $0.isEmpty ? nil : $0 } }
    let names = ["cluster-ca-file", "cluster-cert-file", "cluster-key-file"]
    let files = names.compactMap { given($0) }
    let insecure = ["true", "1", "yes", "on"].contains((values["cluster-insecure"] ?? "").lowercased())
    guard clustered else {
      if !files.isEmpty || insecure {
        throw ConfigError(
          "--cluster-ca-file, --cluster-cert-file, --cluster-key-file and --cluster-insecure need --cluster-id"
        )
      }
      return nil
    }
    if insecure {
      guard files.isEmpty else {
        throw ConfigError(
          "--cluster-insecure turns the cluster TLS off: give it or the --cluster-*-file flags, not both")
      }
      return .insecure
    }
    if files.count == names.count {
      return .files(ClusterTLSFiles(caFile: files[0], certificateFile: files[1], keyFile: files[2]))
    }
    if !files.isEmpty {
      throw ConfigError("--cluster-ca-file, --cluster-cert-file and --cluster-key-file go together")
    }
    if dev { return .development }
    throw ConfigError(
      "--cluster-id needs --cluster-ca-file, --cluster-cert-file and --cluster-key-file (mutual TLS between "
        + "nodes), or --cluster-insecure for a plaintext cluster port")
  }

  private static func cluster(_ values: [String: String]) throws(ConfigError) -> ClusterConfig? {
    func given(_ name: String) -> String? { values[name].flatMap { $0.isEmpty ? nil : $0 } }
    let join = (given("cluster-join") ?? "").split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    .filter { !$0.isEmpty }
    guard let idText = given("cluster-id") else {
      if given("cluster-listen") != nil || given("cluster-advertise") != nil || !join.isEmpty {
        throw ConfigError("--cluster-listen, --cluster-advertise and --cluster-join need --cluster-id")
      }
      return nil
    }
    guard let id = UInt64(idText), id > 0 else {
      throw ConfigError("--cluster-id: expected a whole number from 1, got \"\(idText)\"")
    }
    guard let listen = given("cluster-listen") else {
      throw ConfigError("--cluster-id needs --cluster-listen")
    }
    let advertise = given("cluster-advertise")
    for (name, address) in [("cluster-listen", listen), ("cluster-advertise", advertise ?? listen)]
      + join.map({
        ("cluster-join", $0)
      })
    {
      guard DqliteNode.isValidAddress(address) else {
        throw ConfigError("--\(name): expected HOST:PORT, got \"\(address)\"")
      }
    }
    if advertise == nil, listen.hasPrefix("0.0.0.0:") || listen.hasPrefix("[::]:") {
      throw ConfigError(
        "--cluster-listen \(listen) is not an address others can reach: add --cluster-advertise")
    }
    return ClusterConfig(id: id, listen: listen, advertise: advertise, join: join)
  }

  /// `--help`: every setting with its variable and default.
  public static func helpText() -> String {
    var out = """
      anonauthd: the AnonAuth daemon (anonymous-first authentication over TLS RPC).

      Usage: anonauthd [--dev] [--SETTING VALUE]... [--print-config] [--print-reference PAGE] [--help]
      Each setting is also read from its environment variable, then from the JSON file
      given by --config; a flag wins over the variable, the variable over the file.
      Without --dev, --tls-cert, --tls-key and --master-key-file are required.
      --print-config prints the effective settings and where each came from, then exits;
      --print-reference configuration|reasons|metrics prints that page of docs/ and exits.
      Signals: SIGTERM/SIGINT drain and exit 0; SIGHUP reloads the TLS certificate and key.
      Exit codes: 0 after a graceful stop, 2 on a bad setting (one line on stderr), 1 on
      any other failure.

      """
    for setting in Setting.all {
      let value = setting.isSwitch ? "" : " VALUE"
      out += "  \(setting.flag)\(value)\n"
      out += "      \(setting.help)\n"
      var range = ""
      if let bounds = setting.range, let unit = setting.unit {
        range = "; range \(bounds.lowerBound)...\(unit.describe(bounds.upperBound))"
      }
      out +=
        "      env \(setting.environmentName); default: \(setting.defaultValue.map { $0.isEmpty ? "(empty)" : $0 } ?? "(none)")\(range)\n"
    }
    return out
  }

  /// `--print-config`: the effective settings, secrets masked, with where each came from.
  public func printableConfig() -> String { Self.printable(resolved) }

  /// One `name=value  # source` line per setting; a secret setting's value is `****`.
  static func printable(_ resolved: [(setting: Setting, value: String?, source: String)]) -> String {
    resolved.map { entry in
      let shown = entry.value.map { entry.setting.isSecret && !$0.isEmpty ? "****" : $0 } ?? "(none)"
      return "\(entry.setting.name)=\(shown)  # \(entry.source)"
    }.joined(separator: "\n") + "\n"
  }
}
