import AnonAuthNet
import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Synchronization

/// Counters the ops port publishes in Prometheus text format.
public final class ServerMetrics: Sendable {
  public let connectionsOpened = Atomic<Int>(0)
  public let connectionsClosed = Atomic<Int>(0)
  /// Connections closed on accept for being over `--max-connections` or the per-IP limit.
  public let connectionsRejected = Atomic<Int>(0)
  /// Connections told `GoAway` `RESOURCE_EXHAUSTED`: their next bytes would have taken
  /// the process or their IP over its budget of partly received bytes.
  public let connectionsOverBufferBudget = Atomic<Int>(0)
  /// Calls answered `TOO_MANY_CALLS` because their payload would have taken the process
  /// or their IP over the same budget (payloads count until their handler returns).
  public let callsOverBufferBudget = Atomic<Int>(0)
  /// HTTP/2 header lists over the limit, answered 431 without being decoded further.
  public let http2HeaderListsRefused = Atomic<Int>(0)
  /// HTTP/2 streams refused (REFUSED_STREAM) because their connection's queued answers
  /// were over its output budget.
  public let http2StreamsRefusedOverOutputBudget = Atomic<Int>(0)
  /// HTTP/2 connections whose queued answers went over the output budget.
  public let http2OutputOverBudget = Atomic<Int>(0)
  /// HTTP/2 connections ended with GOAWAY ENHANCE_YOUR_CALM: too many streams refused at
  /// once, or answers over the output budget that did not drain for the frame timeout.
  public let http2ConnectionsCalmed = Atomic<Int>(0)
  /// Call log lines not written for being over `--max-call-log-lines-per-second`.
  public let callLogLinesSuppressed = Atomic<Int>(0)
  /// Handler tasks that have not returned, counting those whose call was already answered
  /// `DEADLINE_EXCEEDED` (they hold their connection's slot until then), and the most
  /// there ever were at once.
  private let handlersRunning = Atomic<Int>(0)
  private let handlersPeak = Atomic<Int>(0)
  private let receiveBudget = Mutex<ReceiveBudget?>(nil)

  /// Upper bounds of the latency histogram, in seconds.
  static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

  private struct CallKey: Hashable {
    let method: String
    let code: Int32
  }

  private struct Histogram {
    var counts = [UInt64](repeating: 0, count: ServerMetrics.buckets.count)
    var count: UInt64 = 0
    var sum: Double = 0

    mutating func record(_ seconds: Double) {
      for (i, bound) in ServerMetrics.buckets.enumerated() where seconds <= bound { counts[i] += 1 }
      count += 1
      sum += seconds
    }

    var snapshot: HistogramSnapshot {
      var out = HistogramSnapshot(bounds: ServerMetrics.buckets)
      out.cumulativeCounts = counts
      out.count = count
      out.sum = sum
      return out
    }
  }

  private struct State {
    var calls: [CallKey: UInt64] = [:]
    var latency: [String: Histogram] = [:]
  }

  private let state = Mutex(State())
  private let loopTurns = Mutex<[LoopTurnStats]>([])

  /// Publishes the turn times of the server's event loops (called when they start).
  func watch(loops: [LoopTurnStats]) {
    loopTurns.withLock { $0 += loops }
  }

  public init() {}

  /// Publishes the bytes `budget` holds (called when the server starts).
  func watch(budget: ReceiveBudget) {
    receiveBudget.withLock { $0 = budget }
  }

  func handlerStarted() {
    let now = handlersRunning.wrappingAdd(1, ordering: .relaxed).newValue
    var peak = handlersPeak.load(ordering: .relaxed)
    while now > peak {
      let (exchanged, original) = handlersPeak.compareExchange(
        expected: peak, desired: now, ordering: .relaxed)
      if exchanged { break }
      peak = original
    }
  }

  func handlerEnded() {
    handlersRunning.wrappingSubtract(1, ordering: .relaxed)
  }

  /// Handler tasks running now (for tests).
  var runningHandlers: Int { handlersRunning.load(ordering: .relaxed) }

  func recordCall(method: String, code: StatusCode, nanos: UInt64) {
    let seconds = Double(nanos) / 1e9
    state.withLock { state in
      state.calls[CallKey(method: method, code: code.rawValue), default: 0] += 1
      // In place: a copy taken out of the dictionary would copy its bucket array too.
      state.latency[method, default: Histogram()].record(seconds)
    }
  }

  /// The metrics in Prometheus text exposition format 0.0.4, under the families
  /// `MetricFamilies` declares.
  public func prometheusText() -> String {
    typealias F = MetricFamilies
    let snapshot = state.withLock { $0 }
    let opened = connectionsOpened.load(ordering: .relaxed)
    let closed = connectionsClosed.load(ordering: .relaxed)
    var out = F.rpcCalls.header
    for key in snapshot.calls.keys.sorted(by: { ($0.method, $0.code) < ($1.method, $1.code) }) {
      out += F.rpcCalls.sample(snapshot.calls[key] ?? 0, key.method, "\(StatusCode(rawValue: key.code))")
    }
    out += F.rpcDuration.header
    for method in snapshot.latency.keys.sorted() {
      guard let histogram = snapshot.latency[method] else { continue }
      out += PrometheusHistogram.series(F.rpcDuration, [method], histogram.snapshot)
    }
    out += F.connectionsOpen.single(opened - closed)
    out += F.connectionsRejected.single(connectionsRejected.load(ordering: .relaxed))
    out += F.connections.single(opened)
    out += F.handlersRunning.single(handlersRunning.load(ordering: .relaxed))
    out += F.handlersRunningPeak.single(handlersPeak.load(ordering: .relaxed))
    out += bufferText()
    out += loopTurnText()
    out += ProcessStats.prometheusText()
    return out
  }

  private func bufferText() -> String {
    typealias F = MetricFamilies
    var out = ""
    if let budget = receiveBudget.withLock({ $0 }) {
      out += F.bufferedBytes.single(budget.totalBytes)
    }
    out += F.bufferBudgetRefusals.single(connectionsOverBufferBudget.load(ordering: .relaxed))
    out += F.callsOverBufferBudget.single(callsOverBufferBudget.load(ordering: .relaxed))
    out += F.http2HeaderListsRefused.single(http2HeaderListsRefused.load(ordering: .relaxed))
    out += F.http2StreamsRefusedOverOutputBudget.single(
      http2StreamsRefusedOverOutputBudget.load(ordering: .relaxed))
    out += F.http2OutputOverBudget.single(http2OutputOverBudget.load(ordering: .relaxed))
    out += F.http2ConnectionsCalmed.single(http2ConnectionsCalmed.load(ordering: .relaxed))
    out += F.callLogLinesSuppressed.single(callLogLinesSuppressed.load(ordering: .relaxed))
    return out
  }

  private func loopTurnText() -> String {
    typealias F = MetricFamilies
    let loops = loopTurns.withLock { $0 }
    guard !loops.isEmpty else { return "" }
    var out = F.loopTurn.header
    var longest = F.loopTurnMax.header
    for loop in loops {
      let stats = loop.snapshot
      var histogram = HistogramSnapshot(bounds: LoopTurnStats.boundsNanos.map { Double($0) / 1e9 })
      histogram.cumulativeCounts = stats.cumulative
      histogram.count = stats.count
      histogram.sum = Double(stats.sumNanos) / 1e9
      out += PrometheusHistogram.series(F.loopTurn, [loop.loopName], histogram)
      longest += F.loopTurnMax.sample(Double(stats.maxNanos) / 1e9, loop.loopName)
    }
    return out + longest
  }
}
