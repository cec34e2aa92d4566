import AnonAuthRPCClient
import AnonAuthWire
import Foundation
import Synchronization

/// `anonauth bench ...`: load figures measured against a running daemon, never in tests.
enum BenchCommand {
  static let summary =
    "measure the daemon: every hot path's throughput, latency, and CPU per call; idle memory"
  static let help = """
    Usage: anonauth bench KIND [--connections N] [--concurrency C | --rate R] [--seconds S] [options]

    Kinds (default connections x concurrency in brackets):
      health        HealthService/Check [64 x 8]; --protocol native (default), grpc, or
                    native,grpc: alternating rounds as for signup, ratio grpc / native
      signup        anonymous SignUp, each from an end-user IP of its own (x-end-user-ip
                    with the admin key: the per-IP quota is exercised, never the limit) [64 x 4];
                    --end-user-ip IP (native): every one from IP instead (raise the quota:
                    its window is read on each sign-up; make bench-scaling)
                    --protocol native (default), http (POST /v1/accounts:signUp over
                    HTTPS/JSON, ALPN http/1.1, keep-alive: one connection per call in
                    flight, N x C of them), http2 (the same JSON over HTTP/2, ALPN
                    h2: C streams on each of N connections), grpc (HTTP/2, ALPN h2: C
                    streams on each of N connections), or a list (both = native,http;
                    native,grpc; native,http,http2,grpc): they alternate in --rounds R
                    (default 3) of --seconds S each [64 x 4], and the report gives each
                    one's ratio to native of the daemon's CPU per call; --warm-up S
                    first runs each transport S seconds unmeasured (default 0)
      refresh       RefreshToken, each task rotating token families of its own [64 x 4]
      verify        VerifyIdToken (--check-revoked: also reads the account) [64 x 8]
      account-info  GetAccountInfo [64 x 8]
      mix           a day of a real app: 40 % refresh, 35 % verify, 12 % account-info,
                    10 % anonymous sign-up, 3 % OIDC links of those new accounts [64 x 4]
      list-accounts AdminService/ListAccounts: each call in flight pages through the
                    project's accounts from a place of its own (--page-size 100,
                    --filter all|anonymous|permanent) [64 x 4]
      password      SignInWithPassword with the right password (scrypt-bound) [8 x 2]
      link-oidc     LinkWithCredential of an ES256 OIDC token to --accounts 4000 new
                    anonymous accounts; stops when they run out [16 x 4]
      idle          opens --connections 10000 TLS connections, one call each, holds them
                    --hold-seconds 5: prints the daemon's resident bytes per connection;
                    --protocol grpc: HTTP/2 connections (preface and SETTINGS exchanged);
                    native,grpc: both sets, each measured on top of the one before and
                    all held together (the daemon needs --max-connections for both)
      decode        no daemon: decodes maximum-size frames and payloads of hostile shapes
                    in this process, against a plain frame (--size, --seconds 0.5)
      admission-tables
                    no daemon: admitting work (Admission, per-address rate tables)
                    with --addresses 1000,1000000 addresses tracked, --admits 200000
                    per round: CPU per admission at each size and its ratio to the
                    first, with a key cap above the size and with the daemon's default;
                    then the failed-sign-in throttle's CPU per attempt the same way
      admission-calls
                    no daemon: the daemon's serving stack in this process (a store in a
                    temporary dir, signing pool, router; no socket), its admission tables
                    filled with --addresses 1000,1000000 addresses before each batch:
                    CPU per RefreshToken and anonymous SignUp call (--kind), from
                    addresses the tables hold and from new ones, --calls 2000 per round,
                    --concurrency 8, --rounds 3 alternating, and each size's ratio to the
                    first; --rate-per-ip N: the signing and write rates per address
                    (default 20; at 1 the large tables stand at their key cap)

    Load:
      --concurrency C   closed loop: C calls in flight per connection, for throughput
      --rate R          open loop: R calls per second on schedule whatever the answers do;
                        latency counts from each call's scheduled time (no coordinated
                        omission); calls the bench itself cannot send count as CLIENT_BEHIND
      --seconds S       how long (default 10)
      --accounts N      accounts made before the clock starts (refresh, verify, mix, link-oidc)

    Report: calls/s, p50/p90/p99/p99.9/max latency, failures by reason; and the daemon's
    CPU per call (process_cpu_seconds_total on /metrics, before and after: needs --ops
    HOST:PORT or client.json's ops), also in units of one RSA-2048 signature: give
    --rsa-signs-per-second from `openssl speed -seconds 3 rsa2048` of the same run (make
    bench does), or the bench measures one second of signing itself.
      --json             one JSON object instead of text
      --allow-failures   exit 0 even when calls failed (overload runs)

    \(Connection.help)
    """

  /// Flags of the benches that take no value.
  static let switches: Set<String> = ["allow-failures"]

  static func run(_ arguments: Arguments) async throws(CLIError) {
    switch arguments.positionals.first {
    case "health": try await health(arguments)
    case "signup": try await SignUpBench.run(arguments)
    case "idle": try await IdleBench.run(arguments)
    case "password": try await CredentialBench.password(arguments)
    case "link-oidc": try await CredentialBench.linkOIDC(arguments)
    case "refresh": try await TokenBenches.refresh(arguments)
    case "verify": try await TokenBenches.verify(arguments)
    case "account-info": try await TokenBenches.accountInfo(arguments)
    case "mix": try await TokenBenches.mix(arguments)
    case "list-accounts": try await AdminBenches.listAccounts(arguments)
    case "decode": try DecodeBench.run(arguments)
    case "admission-tables": try AdmissionTablesBench.run(arguments)
    case "admission-calls": try await AdmissionCallsBench.run(arguments)
    default:
      throw .usage(
        "bench: expected health, signup, refresh, verify, account-info, mix, list-accounts, idle, decode,"
          + " admission-tables, admission-calls, password or"
          + " link-oidc"
          + " (see anonauth bench --help)")
    }
  }

  static func int(_ arguments: Arguments, _ name: String, _ fallback: Int) throws(CLIError) -> Int {
    guard let text = arguments[name] else { return fallback }
    guard let value = Int(text), value > 0 else { throw .usage("--\(name) expects a positive number") }
    return value
  }

  /// The issue's goal for the daemon's CPU per health check over gRPC, as a multiple of
  /// the native one.
  static let healthGoalRatio = 1.5

  static func health(_ arguments: Arguments) async throws(CLIError) {
    let payload = CheckRequest().serializedBytes()
    let workload: BenchWorkload = {
      BenchCall(method: HealthServiceMethods.check.path, payload: payload, metadata: [:])
    }
    let transports = try BenchTransport.parse(arguments["protocol"], allowed: [.native, .grpc])
    if transports == [.native] {
      try await measure(arguments, name: "health", defaultConcurrency: 8, workload: workload)
      return
    }
    try await TransportRounds.run(
      arguments, try Connection(arguments),
      .init(name: "health", goalRatio: healthGoalRatio, transports: transports, workload: workload))
  }

  /// Runs `workload` as the options say (closed loop, or open loop with `--rate`), with
  /// the daemon's CPU read before and after, and prints the report.
  /// - Throws: `.failed` when any call failed, unless `--allow-failures` is given.
  static func measure(
    _ arguments: Arguments, name: String, defaultConnections: Int = 64, defaultConcurrency: Int,
    workload: @escaping BenchWorkload
  ) async throws(CLIError) {
    let options = try LoadRunner.options(
      arguments, defaultConnections: defaultConnections, defaultConcurrency: defaultConcurrency)
    let base = try Connection(arguments)
    let clients = try await LoadRunner.connect(base, count: options.connections)
    let knowsOps = arguments["ops"] != nil || base.file["ops"] != nil
    let rsa = knowsOps ? try ServerCost.rsaSignsPerSecond(arguments) : nil
    let cost = ServerCost(arguments, base)  // after the RSA measurement, which is ours
    let recorder = LatencyRecorder()
    let wall = await LoadRunner.run(options, clients: clients, workload: workload, recorder: recorder)
    let report = BenchReport(
      name: name, options: options, wall: wall, summary: recorder.summary(), serverCPU: cost.cpuSpent(),
      rsa: rsa)
    report.print(json: arguments.has("json"))
    for client in clients { client.close() }
    if report.summary.failureCount > 0, !arguments.has("allow-failures") {
      throw .failed(
        "\(report.summary.failureCount) calls failed; the first: \(recorder.firstFailureReason ?? "?")")
    }
  }

  /// The project's API key and the admin key: sign-ups carry both, with an end-user IP
  /// of their own (a trusted caller's `x-end-user-ip`), so the per-IP quota is exercised
  /// but never the limit.
  struct Keys: Sendable {
    let apiKey: String
    let adminKey: String

    init(_ arguments: Arguments, _ base: Connection) throws(CLIError) {
      apiKey = try base.apiKey()
      adminKey = try AdminKey.read(base)
    }

    var api: [String: String] { ["x-api-key": apiKey] }

    func signUpMetadata(ip n: Int) -> [String: String] {
      [
        "x-api-key": apiKey, "authorization": "Bearer \(adminKey)",
        "x-end-user-ip": BenchCommand.endUserIP(n),
      ]
    }
  }

  /// A distinct IPv4 address for the n-th sign-up of a run.
  static func endUserIP(_ n: Int) -> String { "10.\((n >> 16) & 255).\((n >> 8) & 255).\(n & 255)" }

  /// Hands out distinct numbers to concurrent tasks.
  final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
    func add(_ delta: Int) { value.add(delta, ordering: .relaxed) }
  }
}
