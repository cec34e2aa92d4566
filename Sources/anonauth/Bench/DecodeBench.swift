import AnonAuthWire
import Foundation

/// glibc's `malloc_trim`, which the Glibc module does not export.
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> Int32

/// `anonauth bench decode`: what decoding a maximum-size frame or payload costs, in
/// process (no daemon), for the shapes an attacker would pick, against a plain frame of
/// one big bytes field. Every decode goes through the pre-scan (`ProtoPreScan`), so the
/// hostile shapes are either refused early or at most as dear as the limits allow.
///
/// `--size` (default 4 MiB, the default maximum frame), `--seconds` per shape (default
/// 0.5, at least 3 decodes). Per shape: the answer (decoded or refused), the median time
/// per decode, its ratio to the plain frame of the same run, and the peak extra resident
/// memory (VmHWM over VmRSS, the mark reset between shapes through /proc/self/clear_refs).
enum DecodeBench {
  struct Shape {
    let name: String
    let bytes: Int
    /// Decodes once; false when the decoder refused.
    let decode: () -> Bool
  }

  struct Measurement {
    let name: String
    let bytes: Int
    let decoded: Bool
    let seconds: Double
    let peakExtraBytes: Int?
  }

  static func run(_ arguments: Arguments) throws(CLIError) {
    let size = try BenchCommand.int(arguments, "size", 4 * 1024 * 1024)
    let budget = Double(arguments["seconds"] ?? "0.5") ?? 0.5
    let shapes = DecodeShapes(size: size).all
    let results = shapes.map { measure($0, budget: budget) }
    let plain = results.first?.seconds ?? 0
    if arguments.has("json") {
      let rows = results.map { result in
        "{\"shape\":\"\(result.name)\",\"bytes\":\(result.bytes),\"decoded\":\(result.decoded),"
          + "\"ms\":\(String(format: "%.3f", result.seconds * 1000)),"
          + "\"ratio\":\(String(format: "%.2f", plain > 0 ? result.seconds / plain : 0)),"
          + "\"peak_extra_bytes\":\(result.peakExtraBytes ?? -1)}"
      }
      print("{\"bench\":\"decode\",\"shapes\":[\(rows.joined(separator: ","))]}")
      return
    }
    print("decode: \(size) bytes per frame, median of repeated decodes in this process")
    let header = "shape".padding(toLength: 52, withPad: " ", startingAt: 0)
    print("  \(header)   answer    ms/decode   x plain   peak extra MiB")
    for result in results {
      let name = result.name.padding(toLength: 52, withPad: " ", startingAt: 0)
      let answer = (result.decoded ? "decoded" : "refused").padding(toLength: 7, withPad: " ", startingAt: 0)
      let ms = String(format: "%9.2f", result.seconds * 1000)
      let ratio = String(format: "%7.2f", plain > 0 ? result.seconds / plain : 0)
      let peak = result.peakExtraBytes.map { String(format: "%8.1f", Double($0) / 1_048_576) } ?? "       ?"
      print("  \(name)   \(answer)   \(ms)   \(ratio)   \(peak)")
    }
  }

  /// Runs `shape` at least 3 times and until `budget` seconds have passed (at most 200
  /// times): the median time, and the resident high-water mark over the start.
  static func measure(_ shape: Shape, budget: Double) -> Measurement {
    let decoded = shape.decode()  // warm up, and the answer
    resetPeak()
    let before = status("VmRSS")
    let clock = ContinuousClock()
    var times: [Double] = []
    let start = clock.now
    while times.count < 3 || (LoadRunner.seconds(clock.now - start) < budget && times.count < 200) {
      let one = clock.now
      _ = shape.decode()
      times.append(LoadRunner.seconds(clock.now - one))
    }
    let peak = status("VmHWM")
    times.sort()
    let extra = before.flatMap { base in peak.map { max(0, $0 - base) } }
    return Measurement(
      name: shape.name, bytes: shape.bytes, decoded: decoded, seconds: times[times.count / 2],
      peakExtraBytes: extra)
  }

  /// Linux: writing 5 to clear_refs resets the resident high-water mark (VmHWM). Memory
  /// an earlier shape freed goes back to the system first, or this shape would reuse it
  /// without raising the mark.
  private static func resetPeak() {
    _ = mallocTrim(0)
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
  }

  /// A `kB` line of /proc/self/status, in bytes.
  private static func status(_ key: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
      let digits = line.split(separator: " ").compactMap { Int($0) }
      return digits.first.map { $0 * 1024 }
    }
    return nil
  }
}
