import AnonAuthCrypto
import Foundation

/// Prints one bench's figures as text or, with `--json`, as one JSON object.
struct BenchReport {
  let name: String
  let options: LoadRunner.Options
  let wall: Double
  let summary: LatencyRecorder.Summary
  /// Daemon CPU seconds during the run, when its ops port could be read.
  let serverCPU: Double?
  let rsa: (rate: Double, source: String)?

  var rate: Double { wall > 0 ? Double(summary.count) / wall : 0 }
  var cpuPerCallMicros: Double? {
    guard let serverCPU, summary.count > 0 else { return nil }
    return serverCPU / Double(summary.count + summary.failureCount) * 1e6
  }
  /// CPU per call divided by the time of one RSA-2048 signature on one core.
  var cpuPerCallInRSASigns: Double? {
    guard let micros = cpuPerCallMicros, let rsa else { return nil }
    return micros / 1e6 * rsa.rate
  }

  func print(json: Bool) {
    if json {
      Swift.print(JSONValue.object(jsonObject).jsonText)
      return
    }
    printText()
  }

  /// The figures as the fields of one JSON object.
  var jsonObject: [String: JSONValue] {
    var object: [String: JSONValue] = [
      "bench": .string(name), "connections": .int(Int64(options.connections)),
      "seconds": .double(round(wall * 100) / 100), "calls": .int(Int64(summary.count)),
      "failures": .int(Int64(summary.failureCount)),
      "failures_by_reason": .object(summary.failures.mapValues { .int(Int64($0)) }),
      "calls_per_second": .int(Int64(rate)), "p50_ms": ms(summary.p50Ms), "p90_ms": ms(summary.p90Ms),
      "p99_ms": ms(summary.p99Ms), "p999_ms": ms(summary.p999Ms), "max_ms": ms(summary.maxMs),
    ]
    if let rate = options.rate {
      object["rate"] = .int(Int64(rate))
    } else {
      object["concurrency"] = .int(Int64(options.concurrency))
    }
    if !summary.kinds.isEmpty {
      object["calls_by_kind"] = .object(summary.kinds.mapValues { .int(Int64($0)) })
    }
    if let micros = cpuPerCallMicros { object["server_cpu_us_per_call"] = .double(round(micros * 10) / 10) }
    if let signs = cpuPerCallInRSASigns {
      object["server_cpu_per_call_rsa2048_signs"] = .double(round(signs * 1000) / 1000)
    }
    if let rsa { object["rsa2048_signs_per_second"] = .int(Int64(rsa.rate)) }
    return object
  }

  func printText() {
    Swift.print("\(name): \(options.shape), \(format(wall, 1)) s")
    Swift.print("  calls:     \(summary.count) ok, \(summary.failureCount) failed")
    for (reason, count) in summary.failures.sorted(by: { $0.value > $1.value }) {
      Swift.print("             \(count) \(reason)")
    }
    if !summary.kinds.isEmpty {
      let kinds = summary.kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
      Swift.print("  by kind:   " + kinds.joined(separator: ", "))
    }
    Swift.print("  calls/s:   \(Int(rate))")
    Swift.print(
      "  latency:   p50 \(format(summary.p50Ms)) ms, p90 \(format(summary.p90Ms)) ms, p99 \(format(summary.p99Ms)) ms,"
        + " p99.9 \(format(summary.p999Ms)) ms, max \(format(summary.maxMs)) ms")
    if let micros = cpuPerCallMicros {
      var line = "  server:    \(format(micros, 1)) µs CPU per call"
      if let signs = cpuPerCallInRSASigns, let rsa {
        line += " = \(format(signs, 3)) RSA-2048 signs (\(Int(rsa.rate)) signs/s, \(rsa.source))"
      }
      Swift.print(line)
    } else {
      Swift.print(
        "  server:    CPU per call unknown (needs the ops address, --ops or client.json, and"
          + " process_cpu_seconds_total on its /metrics)")
    }
  }

  private func ms(_ value: Double) -> JSONValue { .double((value * 1000).rounded() / 1000) }
  private func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
}
