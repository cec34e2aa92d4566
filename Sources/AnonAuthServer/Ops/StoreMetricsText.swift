import AnonAuthStore

/// The store's group-commit counters and histograms in Prometheus text.
enum StoreMetricsText {
  static func render(_ m: StoreMetrics) -> String {
    var out = """
      # HELP anonauth_store_transactions_total Write transactions committed.
      # TYPE anonauth_store_transactions_total counter
      anonauth_store_transactions_total \(m.transactions)
      # HELP anonauth_store_writes_total Write jobs committed.
      # TYPE anonauth_store_writes_total counter
      anonauth_store_writes_total \(m.writesCommitted)
      # HELP anonauth_store_write_failures_total Write jobs that failed.
      # TYPE anonauth_store_write_failures_total counter
      anonauth_store_write_failures_total \(m.writesFailed)
      # HELP anonauth_store_writes_dropped_total Write jobs dropped unrun: their call was cancelled (deadline, closed connection) before the writer took them.
      # TYPE anonauth_store_writes_dropped_total counter
      anonauth_store_writes_dropped_total \(m.writesDropped)
      # HELP anonauth_store_batch_size_average Write jobs per transaction, on average.
      # TYPE anonauth_store_batch_size_average gauge
      anonauth_store_batch_size_average \(m.averageBatchSize)
      # HELP anonauth_store_held_batches_total Times the writer held a small batch back for more writes to join it (the commit delay).
      # TYPE anonauth_store_held_batches_total counter
      anonauth_store_held_batches_total \(m.heldBatches)
      # HELP anonauth_store_queued_writes Write jobs waiting for the writer.
      # TYPE anonauth_store_queued_writes gauge
      anonauth_store_queued_writes \(m.queuedWrites)
      # HELP anonauth_store_commit_seconds_total Time spent committing.
      # TYPE anonauth_store_commit_seconds_total counter
      anonauth_store_commit_seconds_total \(Double(m.commitNanoseconds) / 1e9)
      # HELP anonauth_store_checkpoints_total WAL checkpoints by the background checkpointer.
      # TYPE anonauth_store_checkpoints_total counter
      anonauth_store_checkpoints_total \(m.checkpoints)
      # HELP anonauth_store_writer_checkpoints_total WAL checkpoints the writer ran itself: the rest of a background pass, or past the limit.
      # TYPE anonauth_store_writer_checkpoints_total counter
      anonauth_store_writer_checkpoints_total \(m.writerCheckpoints)
      # HELP anonauth_store_wal_limit_checkpoints_total WAL checkpoints the writer ran because the WAL outgrew its limit.
      # TYPE anonauth_store_wal_limit_checkpoints_total counter
      anonauth_store_wal_limit_checkpoints_total \(m.limitCheckpoints)

      """
    out += PrometheusHistogram.render(
      "anonauth_store_batch_size", help: "Write jobs per committed transaction.", m.batchSizes)
    out += PrometheusHistogram.render(
      "anonauth_store_commit_duration_seconds", help: "Time in COMMIT (the fsync), per transaction.",
      m.commitSeconds)
    out += PrometheusHistogram.render(
      "anonauth_store_write_duration_seconds",
      help: "Time from a write's submission to its acknowledgement, per committed write.", m.writeSeconds)
    return out
  }
}
