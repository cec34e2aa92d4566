/// scrypt's cost parameters, bounded so that a stored hash (or a caller) cannot ask for
/// absurd memory or time: a tampered or corrupt row must fail to verify, not take the
/// server down.
public struct ScryptParameters: Sendable, Hashable, CustomStringConvertible {
  /// log2 of N, the CPU/memory cost.
  public let ln: Int
  /// The block size.
  public let r: Int
  /// The parallelism.
  public let p: Int

  /// ln 1...20, r 1...32, p 1...16.
  public static let lnRange = 1...20
  public static let rRange = 1...32
  public static let pRange = 1...16
  /// scrypt's large array is 128 * r * N bytes: at most 64 MiB per hash.
  public static let maximumMemoryBytes = 64 * 1024 * 1024
  /// N * r * p bounds the work: 2^24 is 128 times the default cost.
  public static let maximumWork = 1 << 24

  /// The parameters new hashes use: N = 2^15, r = 8, p = 1 (32 MiB, about twice the
  /// floor of N = 2^14 the project set for itself). Measured in docs/benchmarks.md.
  public static let current = ScryptParameters(uncheckedLn: 15, r: 8, p: 1)

  /// - Throws: `CryptoError` when a parameter is out of its range or the memory or work
  ///   bound is exceeded.
  public init(ln: Int, r: Int, p: Int) throws(CryptoError) {
    guard Self.lnRange.contains(ln), Self.rRange.contains(r), Self.pRange.contains(p) else {
      throw CryptoError("scrypt parameters out of range")
    }
    let n = 1 << ln
    guard 128 * r * n <= Self.maximumMemoryBytes, n * r * p <= Self.maximumWork else {
      throw CryptoError("scrypt parameters too costly")
    }
    self.init(uncheckedLn: ln, r: r, p: p)
  }

  private init(uncheckedLn ln: Int, r: Int, p: Int) {
    self.ln = ln
    self.r = r
    self.p = p
  }

  /// N = 2^ln.
  public var n: UInt64 { 1 << UInt64(ln) }

  /// True when every parameter is at least that of `other`: a hash made with weaker ones
  /// should be made again.
  public func isAtLeast(_ other: ScryptParameters) -> Bool {
    ln >= other.ln && r >= other.r && p >= other.p
  }

  /// The PHC parameter text, "ln=15,r=8,p=1".
  public var description: String { "ln=\(ln),r=\(r),p=\(p)" }
}
