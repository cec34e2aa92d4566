import AnonAuthCrypto
import Foundation

/// What a bench's calls cost the daemon: its CPU seconds (from `/metrics`'
/// `process_cpu_seconds_total`) before and after, per call, and in units of one RSA-2048
/// signature measured on the same machine in the same run, so figures from different
/// machines can be compared.
struct ServerCost {
  let ops: String?
  let cpuBefore: Double?

  /// Reads the daemon's CPU time before the load (ops address from --ops or client.json).
  init(_ arguments: Arguments, _ base: Connection) {
    ops = arguments["ops"] ?? base.file["ops"]
    cpuBefore = ops.flatMap { OpsScrape.metric("process_cpu_seconds_total", ops: $0) }
  }

  /// The daemon's CPU seconds spent since `init`, or nil without an ops address.
  func cpuSpent() -> Double? {
    guard let ops, let before = cpuBefore, let after = OpsScrape.metric("process_cpu_seconds_total", ops: ops)
    else { return nil }
    return after - before
  }

  /// RSA-2048 signatures per second on one core: `--rsa-signs-per-second` (what
  /// `openssl speed -seconds 3 rsa2048` printed in the same run, as `make bench` passes
  /// it), else measured here for one second with the daemon's own signing code.
  static func rsaSignsPerSecond(_ arguments: Arguments) throws(CLIError) -> (rate: Double, source: String) {
    if let text = arguments["rsa-signs-per-second"] {
      guard let rate = Double(text), rate > 0 else { throw .usage("--rsa-signs-per-second expects a number") }
      return (rate, "given")
    }
    let key: RSASigningKey
    do {
      key = try RSASigningKey.generate()
    } catch {
      throw .failed("RSA key generation failed")
    }
    let message = [UInt8](repeating: 0x5a, count: 64)
    let clock = ContinuousClock()
    let start = clock.now
    var signs = 0
    while clock.now - start < .seconds(1) {
      _ = try? key.sign(message)
      signs += 1
    }
    return (Double(signs) / LoadRunner.seconds(clock.now - start), "measured here, one core")
  }
}
