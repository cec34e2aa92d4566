import AnonAuthServer
import AnonAuthService
import AnonAuthWire
import Foundation

/// `anonauth bench admission-calls`: what a real call costs when the admission tables
/// hold few or many addresses, in this process (`InProcessDaemon`: the daemon's serving
/// stack as `--dev` wires it, a SQLite store in a temporary dir, the signing pool, the
/// router reached through the core every transport hands its calls to, no socket).
///
/// One stack per size in `--addresses` (default 1000,1000000). Before each measured
/// batch, every one of the size's addresses is admitted once (the fill, not timed) in
/// the lanes a RefreshToken and a SignUp use (write and signing), as that many calls
/// would be, with the daemon's clock and key cap. Then `--calls` calls (default 2000),
/// `--concurrency` (default 8) at a time, each from an end-user address of its own
/// choosing (`x-end-user-ip`, the admin key makes it trusted): either one the tables
/// hold (of the last 5,000 filled), or a new one (an insert, at the cap a drop). For
/// each of RefreshToken and anonymous SignUp, each shape and each size, `--rounds`
/// (default 3, at least 3) rounds, the sizes' order alternating: the median's process
/// CPU per call (and the slowest round's) and the ratio of each size to the first.
/// `--rate-per-ip N` sets the daemon's signing and write rates per address (default 20 a
/// second): at 1 an address owes a second, and the large tables stand at their key cap.
enum AdmissionCallsBench {
  /// The kinds of call measured.
  enum Kind: String, CaseIterable {
    case refresh
    case signup
  }

  /// Where a measured call's address comes from.
  enum Shape: String, CaseIterable {
    /// One the tables hold: the fill's, among the last `trackedWindow` filled.
    case tracked
    /// One no call used before: a new key in every table, at the cap one dropped.
    case new
  }

  /// The last this many filled addresses are the "tracked" shape's: still held when the
  /// calls begin however fast the fill ran (the tables forget addresses whose unit is
  /// paid off, 50 ms after it at the default rates, two per admission; these are the
  /// last to be forgotten, and a call's admission keeps its own).
  static let trackedWindow = 5_000

  struct Row {
    let kind: Kind
    let shape: Shape
    let addresses: Int
    let cpuUs: Double
    let slowestUs: Double
    /// Keys in every admission table just after the fill, and after the calls.
    let keysAfterFill: Int
    let keysAfterCalls: Int
  }

  /// One size's stack, its addresses and what its calls need.
  final class Stack: @unchecked Sendable {
    // @unchecked: `tokens`, `nextNew` and `keysAfterFill` are changed only between
    // batches, by the one task that runs them; a batch's calls only read them.
    let size: Int
    let daemon: InProcessDaemon
    let directory: String
    let addresses: [String]
    var tokens: [String] = []
    var nextNew = 0
    var keysAfterFill = 0

    init(size: Int, daemon: InProcessDaemon, directory: String) {
      self.size = size
      self.daemon = daemon
      self.directory = directory
      addresses = (0..<size).map(BenchCommand.endUserIP)
    }

    var apiKey: String { daemon.keys["api_key"] ?? "" }
    var adminKey: String { daemon.keys["admin_key"] ?? "" }

    /// Every address admitted once in the write and signing lanes, each ticket left at
    /// once. The fill's projects are made up, a thousand addresses each, so that no
    /// project's rate refuses it.
    func fill() {
      for (index, address) in addresses.enumerated() {
        let source = Admission.Source(projectID: "fill-\(index / 1000)", ipKey: address)
        for work in [AdmissionWork.write, .signing] {
          (try? daemon.admission.admit(work, source))?.leave()
        }
      }
      keysAfterFill = daemon.admission.trackedKeys
    }

    /// The `n`-th call's address: one of the last `trackedWindow` filled, spread over
    /// them, or one no call of this stack used before ("11.x.y.z").
    func address(_ shape: Shape, _ n: Int) -> String {
      switch shape {
      case .tracked:
        let window = min(size, AdmissionCallsBench.trackedWindow)
        return addresses[size - window + (n &* 7919) % window]
      case .new:
        let index = nextNew + n
        return "11.\((index >> 16) & 255).\((index >> 8) & 255).\(index & 255)"
      }
    }
  }

  static func run(_ arguments: Arguments) async throws(CLIError) {
    let sizes = try AdmissionTablesBench.parseSizes(arguments["addresses"] ?? "1000,1000000")
    let calls = try BenchCommand.int(arguments, "calls", 2000)
    let concurrency = try BenchCommand.int(arguments, "concurrency", 8)
    let rounds = try BenchCommand.int(arguments, "rounds", 3)
    let flags =
      try arguments["rate-per-ip"].map { (text) throws(CLIError) -> [String] in
        guard let rate = Int(text), rate > 0 else { throw .usage("--rate-per-ip expects a positive number") }
        return ["--signing-rate-per-ip", String(rate), "--write-rate-per-ip", String(rate)]
      } ?? []
    guard rounds >= 3 else { throw .usage("--rounds expects 3 or more (the median of each)") }
    let kinds = try (arguments["kind"] ?? "refresh,signup").split(separator: ",").map {
      (name) throws(CLIError) -> Kind in
      guard let kind = Kind(rawValue: String(name)) else {
        throw .usage("--kind expects refresh, signup or refresh,signup")
      }
      return kind
    }
    var stacks: [Stack] = []
    defer {
      for stack in stacks { try? FileManager.default.removeItem(atPath: stack.directory) }
    }
    for size in sizes {
      let directory = NSTemporaryDirectory() + "anonauth-admission-calls-\(UUID().uuidString)"
      let daemon: InProcessDaemon
      do {
        daemon = try await InProcessDaemon.start(dataDir: directory, flags: flags)
      } catch {
        throw .failed("the in-process daemon did not start: \(error)")
      }
      let stack = Stack(size: size, daemon: daemon, directory: directory)
      stacks.append(stack)
      if kinds.contains(.refresh) {
        // A token family per task, rotated by each of its calls.
        for _ in 0..<concurrency {
          let reply = try await call(stack, AccountServiceMethods.signUp.path, anonymousSignUp, address: nil)
          stack.tokens.append(reply.refreshToken)
        }
      }
    }
    var samples: [String: [Double]] = [:]
    var keys: [String: (Int, Int)] = [:]
    for round in 0..<rounds {
      for kind in kinds {
        for shape in Shape.allCases {
          // The sizes' order alternates round by round: a drift of the machine's load
          // weighs on each alike.
          for stack in round % 2 == 0 ? stacks : stacks.reversed() {
            stack.fill()
            let cpu = try await batch(stack, kind, shape, calls: calls, concurrency: concurrency)
            let id = "\(kind.rawValue) \(shape.rawValue) \(stack.size)"
            samples[id, default: []].append(cpu)
            keys[id] = (stack.keysAfterFill, stack.daemon.admission.trackedKeys)
          }
        }
      }
    }
    for stack in stacks { await stack.daemon.stop() }
    var rows: [Row] = []
    for kind in kinds {
      for shape in Shape.allCases {
        for size in sizes {
          let id = "\(kind.rawValue) \(shape.rawValue) \(size)"
          let sorted = (samples[id] ?? []).sorted()
          rows.append(
            Row(
              kind: kind, shape: shape, addresses: size, cpuUs: sorted[sorted.count / 2],
              slowestUs: sorted.last ?? 0, keysAfterFill: keys[id]?.0 ?? 0, keysAfterCalls: keys[id]?.1 ?? 0))
        }
      }
    }
    report(
      rows, calls: calls, rounds: rounds, concurrency: concurrency,
      ratePerIP: arguments["rate-per-ip"] ?? String(AdmissionLimits().signing.perIP),
      json: arguments.has("json"))
  }

  static let anonymousSignUp = SignUpRequest(kind: .anonymous(AnonymousSignUp())).serializedBytes()

  /// `calls` calls of `kind` from `shape`'s addresses, `concurrency` at a time: this
  /// process's CPU per call, in microseconds.
  static func batch(_ stack: Stack, _ kind: Kind, _ shape: Shape, calls: Int, concurrency: Int)
    async throws(CLIError) -> Double
  {
    let start = cpuNs()
    let per = (calls + concurrency - 1) / concurrency
    // Each task rotates a token family of its own and hands back its last token.
    let results = await withTaskGroup(of: (Int, Result<String, CLIError>).self) { group in
      for task in 0..<concurrency {
        let first = kind == .refresh ? stack.tokens[task] : ""
        group.addTask {
          var token = first
          for i in 0..<per {
            let address = stack.address(shape, task * per + i)
            do throws(CLIError) {
              switch kind {
              case .refresh:
                let request = RefreshTokenRequest(refreshToken: token).serializedBytes()
                token = try await call(
                  stack, AccountServiceMethods.refreshToken.path, request, address: address
                )
                .refreshToken
              case .signup:
                _ = try await call(
                  stack, AccountServiceMethods.signUp.path, anonymousSignUp, address: address)
              }
            } catch {
              return (task, .failure(error))
            }
          }
          return (task, .success(token))
        }
      }
      var all: [(Int, Result<String, CLIError>)] = []
      for await result in group { all.append(result) }
      return all
    }
    var failure: CLIError?
    for (task, result) in results {
      switch result {
      case .success(let token): if kind == .refresh { stack.tokens[task] = token }
      case .failure(let error): failure = failure ?? error
      }
    }
    if let failure { throw failure }
    if shape == .new { stack.nextNew += per * concurrency }
    return Double(cpuNs() - start) / 1000 / Double(per * concurrency)
  }

  /// One call through the stack's router, as the project's app from `address` (given by
  /// a trusted caller: the admin key) or from the loopback peer (nil).
  static func call(_ stack: Stack, _ method: String, _ payload: [UInt8], address: String?)
    async throws(CLIError) -> AuthResponse
  {
    var metadata = ["x-api-key": stack.apiKey]
    if let address {
      metadata["authorization"] = "Bearer \(stack.adminKey)"
      metadata["x-end-user-ip"] = address
    }
    switch await stack.daemon.call(method, payload: payload, metadata: metadata) {
    case .failure(let error):
      throw .failed("\(method) failed: \(error)")
    case .success(let bytes):
      do {
        return try AuthResponse(serializedBytes: bytes)
      } catch {
        throw .failed("\(method) answered something that is not an AuthResponse")
      }
    }
  }

  static func report(_ rows: [Row], calls: Int, rounds: Int, concurrency: Int, ratePerIP: String, json: Bool)
  {
    func ratio(_ row: Row) -> Double {
      guard let base = rows.first(where: { $0.kind == row.kind && $0.shape == row.shape }) else { return 1 }
      return row.cpuUs / base.cpuUs
    }
    if json {
      let items = rows.map { row in
        "{\"kind\":\"\(row.kind.rawValue)\",\"shape\":\"\(row.shape.rawValue)\",\"addresses\":\(row.addresses),"
          + "\"cpu_us_per_call\":\(String(format: "%.1f", row.cpuUs)),"
          + "\"slowest_round_us_per_call\":\(String(format: "%.1f", row.slowestUs)),"
          + "\"keys_after_fill\":\(row.keysAfterFill),\"keys_after_calls\":\(row.keysAfterCalls),"
          + "\"ratio\":\(String(format: "%.3f", ratio(row)))}"
      }
      print(
        "{\"bench\":\"admission-calls\",\"calls\":\(calls),\"rounds\":\(rounds),\"concurrency\":\(concurrency),"
          + "\"rate_per_ip\":\(ratePerIP),"
          + "\"rows\":[\(items.joined(separator: ","))]}")
      return
    }
    print(
      "admission-calls: \(calls) calls per round, \(concurrency) at a time, process CPU per call"
        + " (median of \(rounds)); signing and write rates \(ratePerIP) a second per address")
    for row in rows {
      print(
        "  \(row.kind.rawValue) from \(row.shape.rawValue) addresses, \(row.addresses) addresses filled:"
          + " \(String(format: "%.1f", row.cpuUs)) us (slowest round \(String(format: "%.1f", row.slowestUs)) us)"
          + " (\(row.keysAfterFill) keys after the fill, \(row.keysAfterCalls) after the calls),"
          + " \(String(format: "%.2f", ratio(row)))x")
    }
  }

  /// This process's CPU time so far, in nanoseconds.
  static func cpuNs() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
  }
}
