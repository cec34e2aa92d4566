import AnonAuthClient
import AnonAuthWire
import Foundation
import Synchronization

/// `anonauth bench ...`: load figures measured against a running daemon, never in tests.
enum BenchCommand {
  static let summary =
    "measure the daemon: health, sign-up, password sign-in and linking throughput, idle memory"
  static let help = """
    Usage: anonauth bench health [--connections 64] [--concurrency 8] [--seconds 10] [options]
           anonauth bench signup [--connections 64] [--concurrency 4] [--seconds 10] [options]
           anonauth bench idle   [--connections 10000] [--ops HOST:PORT] [--hold-seconds 5] [options]
           anonauth bench password  [--connections 8] [--concurrency 2] [--seconds 10] [options]
           anonauth bench link-oidc [--connections 16] [--concurrency 4] [--seconds 10] [--accounts 4000] [options]

    health  Health calls on N connections, each with C calls in flight, for S seconds:
            prints calls/s, p50, p99 and max latency.
    signup  Anonymous SignUp calls, each from its own end-user IP (sent as x-end-user-ip
            with the admin key, so the per-IP quota is exercised but never the limit):
            prints sign-ups/s, p50, p99 and max latency.
    idle    Opens N TLS connections (one call each, then idle) and reads the daemon's
            resident memory from its ops port before and after: prints bytes per
            connection. The daemon's ops address comes from --ops or client.json.
    password
            Creates one email/password account, then SignInWithPassword with the right
            password: prints sign-ins/s (bound by scrypt's cost on the daemon's cores).
    link-oidc
            Configures the provider oidc.bench on the project (inline P-256 keys made
            here; other providers are kept), makes --accounts anonymous accounts, then
            links an ES256 ID token of a new identity to each: prints links/s. Stops early
            when the accounts run out. Needs the admin key (--admin-key or client.json).

    \(Connection.help)
    """

  static func run(_ arguments: Arguments) async throws(CLIError) {
    switch arguments.positionals.first {
    case "health": try await health(arguments)
    case "signup": try await signUp(arguments)
    case "idle": try await idle(arguments)
    case "password": try await CredentialBench.password(arguments)
    case "link-oidc": try await CredentialBench.linkOIDC(arguments)
    default:
      throw .usage("bench: expected health, signup, idle, password or link-oidc (see anonauth bench --help)")
    }
  }

  static func int(_ arguments: Arguments, _ name: String, _ fallback: Int) throws(CLIError) -> Int {
    guard let text = arguments[name] else { return fallback }
    guard let value = Int(text), value > 0 else { throw .usage("--\(name) expects a positive number") }
    return value
  }

  static func health(_ arguments: Arguments) async throws(CLIError) {
    let payload = CheckRequest().serializedBytes()
    try await load(
      arguments, name: "health", method: "/anonauth.v1.HealthService/Check", defaultConcurrency: 8
    ) { _ in (payload, [:]) }
  }

  static func signUp(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let apiKey = try base.apiKey()
    let adminKey = try AdminKey.read(base)
    var request = SignUpRequest()
    request.kind = .anonymous(AnonymousSignUp())
    let payload = request.serializedBytes()
    let counter = Counter()
    try await load(
      arguments, name: "signup", method: "/anonauth.v1.AccountService/SignUp", defaultConcurrency: 4
    ) { _ in
      let n = counter.next()
      let ip = "10.\((n >> 16) & 255).\((n >> 8) & 255).\(n & 255)"
      return (payload, ["x-api-key": apiKey, "authorization": "Bearer \(adminKey)", "x-end-user-ip": ip])
    }
  }

  /// Runs `method` from C tasks on each of N connections for S seconds and reports.
  /// `request` is asked for each call's payload and metadata; nil ends that task early.
  static func load(
    _ arguments: Arguments, name: String, method: String, defaultConcurrency: Int,
    defaultConnections: Int = 64,
    request: @escaping @Sendable (Int) -> ([UInt8], [String: String])?
  ) async throws(CLIError) {
    let connections = try int(arguments, "connections", defaultConnections)
    let concurrency = try int(arguments, "concurrency", defaultConcurrency)
    let seconds = try int(arguments, "seconds", 10)
    let base = try Connection(arguments)
    var clients: [RPCClient] = []
    for _ in 0..<connections {
      do {
        clients.append(try RPCClient(endpoint: base.client.endpoint, defaultTimeoutMs: 30_000))
      } catch {
        throw .usage(error.description)
      }
    }
    let warmUp = CheckRequest().serializedBytes()
    for client in clients {  // connect (TLS handshakes) before timing
      do {
        _ = try await client.callRaw("/anonauth.v1.HealthService/Check", payload: warmUp)
      } catch {
        throw .failed("warm-up call failed: \(error)")
      }
    }
    let recorder = LatencyRecorder()
    let clock = ContinuousClock()
    let end = clock.now + .seconds(seconds)
    let started = clock.now
    await withTaskGroup(of: Void.self) { group in
      for client in clients {
        for _ in 0..<concurrency {
          group.addTask {
            while clock.now < end {
              let t0 = clock.now
              guard let (payload, metadata) = request(0) else { return }
              do {
                _ = try await client.callRaw(method, payload: payload, metadata: metadata)
                let elapsed = clock.now - t0
                recorder.record(
                  nanos: UInt64(elapsed.components.seconds) * 1_000_000_000
                    + UInt64(elapsed.components.attoseconds / 1_000_000_000))
              } catch {
                recorder.fail("\(error)")
              }
            }
          }
        }
      }
    }
    let elapsed = clock.now - started
    let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let s = recorder.summary()
    let rate = Double(s.count) / wall
    if arguments.has("json") {
      print(
        "{\"bench\":\"\(name)\",\"connections\":\(connections),\"concurrency\":\(concurrency),"
          + "\"calls\":\(s.count),\"failures\":\(s.failures),\"seconds\":\(String(format: "%.2f", wall)),"
          + "\"calls_per_second\":\(Int(rate)),\"p50_ms\":\(String(format: "%.3f", s.p50Ms)),"
          + "\"p99_ms\":\(String(format: "%.3f", s.p99Ms)),\"max_ms\":\(String(format: "%.3f", s.maxMs))}")
    } else {
      print(
        "\(name): \(connections) connections x \(concurrency) in flight, \(String(format: "%.1f", wall)) s")
      print("  calls:     \(s.count) (\(s.failures) failed)")
      print("  calls/s:   \(Int(rate))")
      print(
        "  latency:   p50 \(String(format: "%.2f", s.p50Ms)) ms, p99 \(String(format: "%.2f", s.p99Ms)) ms, max \(String(format: "%.2f", s.maxMs)) ms"
      )
    }
    if s.failures > 0 {
      throw .failed("\(s.failures) calls failed; the first: \(recorder.firstFailureReason ?? "?")")
    }
  }

  /// Hands out distinct numbers to concurrent tasks.
  final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
  }

  static func idle(_ arguments: Arguments) async throws(CLIError) {
    let count = try int(arguments, "connections", 10_000)
    let hold = try int(arguments, "hold-seconds", 5)
    let base = try Connection(arguments)
    guard let ops = arguments["ops"] ?? base.file["ops"] else {
      throw .usage("bench idle needs the daemon's ops address: --ops HOST:PORT")
    }
    let rssName = "process_resident_memory_bytes"
    let connName = "anonauth_connections_open"
    guard let before = OpsScrape.metric(rssName, ops: ops),
      let openBefore = OpsScrape.metric(connName, ops: ops)
    else {
      throw .failed("cannot read \(rssName) from http://\(ops)/metrics")
    }
    let method = "/anonauth.v1.HealthService/Check"
    let payload = CheckRequest().serializedBytes()
    var clients: [RPCClient] = []
    clients.reserveCapacity(count)
    for _ in 0..<count {
      do {
        clients.append(try RPCClient(endpoint: base.client.endpoint, defaultTimeoutMs: 60_000))
      } catch {
        throw .usage(error.description)
      }
    }
    // Open in waves so the daemon's accept backlog is never the limit.
    var failed = 0
    let wave = 200
    var index = 0
    while index < clients.count {
      let slice = clients[index..<min(index + wave, clients.count)]
      failed += await withTaskGroup(of: Int.self) { group in
        for client in slice {
          group.addTask {
            do {
              _ = try await client.callRaw(method, payload: payload)
              return 0
            } catch {
              return 1
            }
          }
        }
        return await group.reduce(0, +)
      }
      index += wave
    }
    try? await Task.sleep(for: .seconds(hold))
    guard let after = OpsScrape.metric(rssName, ops: ops),
      let openAfter = OpsScrape.metric(connName, ops: ops)
    else {
      throw .failed("cannot read \(rssName) from http://\(ops)/metrics")
    }
    let held = Int(openAfter - openBefore)
    let perConnection = held > 0 ? (after - before) / Double(held) : 0
    if arguments.has("json") {
      print(
        "{\"bench\":\"idle\",\"requested\":\(count),\"held\":\(held),\"failed\":\(failed),"
          + "\"rss_before\":\(Int(before)),\"rss_after\":\(Int(after)),\"bytes_per_connection\":\(Int(perConnection))}"
      )
    } else {
      print("idle: \(held) connections held open (\(failed) failed to open)")
      print("  daemon RSS: \(Int(before) / 1024) KiB -> \(Int(after) / 1024) KiB")
      print("  per connection: \(String(format: "%.1f", perConnection / 1024)) KiB")
    }
    for client in clients { client.close() }
  }
}
