/// The three kinds of expensive work a call can ask for, each admitted on its own.
public enum AdmissionWork: Int, Sendable, CaseIterable, CustomStringConvertible {
  /// scrypt on the password pool (sign-up, sign-in, a password link).
  case password
  /// RS256 signing of an ID token on the signing pool.
  case signing
  /// A write job on the store's one writer.
  case write

  public var description: String {
    switch self {
    case .password: "password"
    case .signing: "signing"
    case .write: "write"
    }
  }
}

/// How much expensive work one end-user IP and one project may ask for: a rate per
/// second for each kind (after a burst of ten seconds' worth; successes count as much as
/// failures), and a share of each pool's places (threads plus queue) that one IP, or one
/// project, may hold at once.
///
/// The defaults are far above what one NAT'd office or one busy project does (a password
/// sign-in per person is rare: sessions refresh; 2 a second is 7,200 an hour from one
/// address), and low enough that one address cannot keep a pool to itself: on two cores
/// the password pool has one thread (about 10 hashes a second), and an address at 5 a
/// second still doubled a bystander's sign-in time, at 2 it did not.
public struct AdmissionLimits: Sendable, Equatable {
  /// Units a second per key; 0 turns that rate off.
  public struct Rates: Sendable, Equatable {
    public var perIP: Int
    public var perProject: Int

    public init(perIP: Int, perProject: Int) {
      self.perIP = perIP
      self.perProject = perProject
    }
  }

  public var password = Rates(perIP: 2, perProject: 100)
  public var signing = Rates(perIP: 20, perProject: 2000)
  public var write = Rates(perIP: 20, perProject: 2000)
  /// Percent of a pool's places one IP may hold at once (at least one place); 100: off.
  public var ipSharePercent = 12
  /// Percent of a pool's places one project may hold at once; 100: off.
  public var projectSharePercent = 50
  /// The most keys each rate table holds (see `RateTable`).
  public var maxKeys = 100_000

  /// A burst is this many seconds of the rate.
  public static let burstSeconds = 10
  /// Places of the signing pool's queue and of the store's writer queue counted for the
  /// shares: neither queue has a hard bound, so a nominal one stands for it. Both jobs
  /// are short (a signature is about 1.5 ms, writes commit in groups), so the nominal
  /// queue is long: a busy single-tenant deployment is not refused for its own
  /// concurrency, while one address still cannot hold more than its share.
  public static let nominalSigningQueue = 1024
  public static let nominalWriteQueue = 1024

  public init() {}

  /// No limit at all (benchmarks, tests of other things).
  public static let off: AdmissionLimits = {
    var limits = AdmissionLimits()
    limits.password = Rates(perIP: 0, perProject: 0)
    limits.signing = Rates(perIP: 0, perProject: 0)
    limits.write = Rates(perIP: 0, perProject: 0)
    limits.ipSharePercent = 100
    limits.projectSharePercent = 100
    return limits
  }()

  func rates(_ work: AdmissionWork) -> Rates {
    switch work {
    case .password: password
    case .signing: signing
    case .write: write
    }
  }
}
