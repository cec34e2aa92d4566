import AnonAuthRPCClient
import AnonAuthTestSupport
import AnonAuthWire
import Foundation
import Testing

/// The real `anonauthd` started as a process in a temporary data dir, on port 0 for both
/// listeners, with the addresses read from its `ready` line.
final class DaemonProcess: Sendable {
  let process: ChildProcess
  let dataDir: URL
  let rpc: String
  let ops: String
  /// The emulator listener's address (`--firebase-emulator-listen`), when it is on.
  let emulator: String?
  let caFile: String
  let logFile: URL
  /// A restarted daemon leaves its data dir to the test that made it.
  private let keepDataDir: Bool

  /// Starts the daemon with `--dev` and the given extra flags and waits for `ready` on a
  /// thread of its own: a start blocks on a pipe for as long as the machine takes, and a
  /// test that blocked a thread of the cooperative pool (two on a 2-core machine) stalled
  /// every other test's calls until their deadlines passed.
  /// - Parameter reuse: a data dir to start on again (a restart); a new temporary one by
  ///   default.
  static func start(_ extra: [String] = [], environment: [String: String] = [:], dataDir reuse: URL? = nil)
    async throws -> DaemonProcess
  {
    try await offPool { try DaemonProcess(extra, environment: environment, dataDir: reuse) }
  }

  /// Sends SIGTERM and waits, off the cooperative pool (see `start`); returns the exit
  /// status.
  func terminated() async -> Int32 {
    let process = process
    return await offPool { () -> Int32 in
      process.signal(SIGTERM)
      return process.wait()
    }
  }

  private init(_ extra: [String] = [], environment: [String: String] = [:], dataDir reuse: URL? = nil) throws
  {
    dataDir =
      reuse
      ?? FileManager.default.temporaryDirectory.appendingPathComponent("anonauth-it-\(UUID().uuidString)")
    keepDataDir = reuse != nil
    logFile = dataDir.appendingPathExtension("\(UUID().uuidString.prefix(8)).log")
    _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    let process = try ChildProcess(
      TestBinaries.anonauthd,
      ["--dev", "--data-dir", dataDir.path, "--listen", "127.0.0.1:0", "--ops-listen", "127.0.0.1:0"] + extra,
      environment: env, stdout: .pipe, stderr: .file(logFile.path))
    self.process = process
    guard let stdout = process.stdout, let line = Self.readLine(stdout),
      let data = line.data(using: .utf8),
      let ready = try JSONSerialization.jsonObject(with: data) as? [String: Any],
      ready["event"] as? String == "ready",
      let rpc = ready["rpc"] as? String, let ops = ready["ops"] as? String
    else {
      process.signal(SIGTERM)
      process.wait()
      throw DaemonError.notReady(String(decoding: (try? Data(contentsOf: logFile)) ?? Data(), as: UTF8.self))
    }
    self.rpc = rpc
    self.ops = ops
    self.emulator = ready["firebase_emulator"] as? String
    self.caFile = dataDir.appendingPathComponent("tls/dev-cert.pem").path
  }

  deinit {
    if process.isRunning {
      process.signal(SIGINT)
      process.wait()
    }
    if !keepDataDir { try? FileManager.default.removeItem(at: dataDir) }
    try? FileManager.default.removeItem(at: logFile)
  }

  enum DaemonError: Error { case notReady(String) }

  private static func readLine(_ handle: FileHandle) -> String? {
    var bytes: [UInt8] = []
    while true {
      guard let chunk = try? handle.read(upToCount: 1), let byte = chunk.first else { return nil }
      if byte == 10 { return String(decoding: bytes, as: UTF8.self) }
      bytes.append(byte)
    }
  }

  /// The dev project's keys from `client.json`.
  var clientFile: [String: String] {
    guard let data = FileManager.default.contents(atPath: dataDir.appendingPathComponent("client.json").path),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return [:] }
    return object.compactMapValues { $0 as? String }
  }

  var apiKey: String { clientFile["api_key"] ?? "" }
  var adminKey: String { clientFile["admin_key"] ?? "" }

  func client(timeoutMs: UInt32 = 10_000) throws -> RPCClient {
    try RPCClient(endpoint: ClientEndpoint(address: rpc, caFile: caFile), defaultTimeoutMs: timeoutMs)
  }

  var log: String { String(decoding: (try? Data(contentsOf: logFile)) ?? Data(), as: UTF8.self) }
}
