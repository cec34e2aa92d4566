import AnonAuthService
import AnonAuthStore

/// The store's group-commit counters and histograms in Prometheus text, under the
/// families `MetricFamilies` declares.
enum StoreMetricsText {
  static func render(_ m: StoreMetrics) -> String {
    typealias F = MetricFamilies
    var out = F.storeTransactions.single(m.transactions)
    out += F.storeWrites.single(m.writesCommitted)
    out += F.storeWriteFailures.single(m.writesFailed)
    out += F.storeWritesDropped.single(m.writesDropped)
    out += F.storeBatchSizeAverage.single(m.averageBatchSize)
    out += F.storeHeldBatches.single(m.heldBatches)
    out += F.storeWriterRoundTrips.single(m.writerRoundTrips)
    out += F.storeWriterRequests.single(m.writerRequests)
    out += F.storeQueuedWrites.single(m.queuedWrites)
    out += F.storeCommitSeconds.single(Double(m.commitNanoseconds) / 1e9)
    out += F.storeCheckpoints.single(m.checkpoints)
    out += F.storeWriterCheckpoints.single(m.writerCheckpoints)
    out += F.storeWALLimitCheckpoints.single(m.limitCheckpoints)
    out += PrometheusHistogram.render(F.storeBatchSize, m.batchSizes)
    out += PrometheusHistogram.render(F.storeCommitDuration, m.commitSeconds)
    out += PrometheusHistogram.render(F.storeWriteDuration, m.writeSeconds)
    return out
  }
}
