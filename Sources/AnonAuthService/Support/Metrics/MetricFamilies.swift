/// Every metric family `/metrics` publishes, declared once: the registry the exposition
/// code (`ServerMetrics`, `ServiceMetrics`, the store's and the process's renderers) writes
/// from, and docs/metrics.md is generated from (`anonauthd --print-reference metrics`,
/// checked by `make check-reference-docs`). It lives in the service layer because that is
/// the lowest module both the service's and the server's metrics see.
///
/// Names, types and labels are what dashboards and alerts query: add families, never
/// rename one or change its labels. A family missing from `all` fails `MetricsRegistryTests`.
public enum MetricFamilies {
  // MARK: RPC server

  public static let rpcCalls = MetricFamily(
    "anonauth_rpc_calls_total", .counter, .rpc, labels: ["method", "code"],
    help: "RPC calls answered, by method and status code.")
  public static let rpcDuration = MetricFamily(
    "anonauth_rpc_duration_seconds", .histogram, .rpc, labels: ["method"],
    help: "Time from a call's arrival to its handler's end.")
  public static let connectionsOpen = MetricFamily(
    "anonauth_connections_open", .gauge, .rpc, help: "Open RPC connections.")
  public static let connectionsRejected = MetricFamily(
    "anonauth_connections_rejected_total", .counter, .rpc,
    help: "RPC connections closed on accept (over a limit).")
  public static let connections = MetricFamily(
    "anonauth_connections_total", .counter, .rpc, help: "RPC connections accepted.")
  public static let handlersRunning = MetricFamily(
    "anonauth_rpc_handlers_running", .gauge, .rpc,
    help: "Call handlers whose task has not returned (answered or not).")
  public static let handlersRunningPeak = MetricFamily(
    "anonauth_rpc_handlers_running_peak", .gauge, .rpc,
    help: "The most call handlers running at once since start.")
  public static let bufferedBytes = MetricFamily(
    "anonauth_rpc_buffered_bytes", .gauge, .rpc,
    help: "Bytes held of partly received frames and of calls whose handler runs.")
  public static let bufferBudgetRefusals = MetricFamily(
    "anonauth_rpc_buffer_budget_refusals_total", .counter, .rpc,
    help:
      "Connections closed (GoAway RESOURCE_EXHAUSTED) for going over the process's or their IP's budget of partly received bytes."
  )
  public static let callsOverBufferBudget = MetricFamily(
    "anonauth_rpc_calls_over_buffer_budget_total", .counter, .rpc,
    help:
      "Calls answered TOO_MANY_CALLS because their payload would have taken the process or their IP over the budget of received bytes."
  )
  public static let http2HeaderListsRefused = MetricFamily(
    "anonauth_http2_header_lists_refused_total", .counter, .rpc,
    help: "HTTP/2 header lists over the limit: answered 431, the rest of the block not decoded into fields.")
  public static let http2StreamsRefusedOverOutputBudget = MetricFamily(
    "anonauth_http2_streams_refused_over_output_budget_total", .counter, .rpc,
    help:
      "HTTP/2 streams refused (REFUSED_STREAM) while their connection's queued answers were over its output budget."
  )
  public static let http2OutputOverBudget = MetricFamily(
    "anonauth_http2_output_over_budget_total", .counter, .rpc,
    help: "Times an HTTP/2 connection's answers queued behind closed windows went over its output budget.")
  public static let http2ConnectionsCalmed = MetricFamily(
    "anonauth_http2_connections_calmed_total", .counter, .rpc,
    help:
      "HTTP/2 connections ended with GOAWAY ENHANCE_YOUR_CALM: too many streams refused at once, or output over budget that did not drain."
  )
  public static let callLogLinesSuppressed = MetricFamily(
    "anonauth_call_log_lines_suppressed_total", .counter, .rpc,
    help:
      "Call log lines not written for being over --max-call-log-lines-per-second (the calls are counted in anonauth_rpc_calls_total)."
  )

  // MARK: Event loops

  public static let loopTurn = MetricFamily(
    "anonauth_event_loop_turn_seconds", .histogram, .eventLoops, labels: ["loop"],
    help: "How long each event-loop turn worked; every connection of the loop waits while a turn runs.")
  public static let loopTurnMax = MetricFamily(
    "anonauth_event_loop_turn_max_seconds", .gauge, .eventLoops, labels: ["loop"],
    help: "The longest event-loop turn since start.")

  // MARK: Process (Prometheus' standard names)

  public static let residentMemory = MetricFamily(
    "process_resident_memory_bytes", .gauge, .process, help: "Resident memory of the daemon.")
  public static let cpuSeconds = MetricFamily(
    "process_cpu_seconds_total", .counter, .process,
    help: "User and system CPU time of the daemon, in seconds.")
  public static let openFDs = MetricFamily(
    "process_open_fds", .gauge, .process, help: "Open file descriptors.")
  public static let maxFDs = MetricFamily(
    "process_max_fds", .gauge, .process, help: "The limit on open file descriptors.")
  public static let threads = MetricFamily(
    "process_threads", .gauge, .process, help: "Threads of the daemon.")

  // MARK: Accounts, sign-ins and admission

  public static let signUps = MetricFamily(
    "anonauth_sign_ups_total", .counter, .accounts, labels: ["provider"],
    help: "Accounts created, by sign-in provider.")
  public static let links = MetricFamily(
    "anonauth_links_total", .counter, .accounts, labels: ["provider"],
    help: "Credentials linked to existing accounts, by provider.")
  public static let signUpQuotaRefusals = MetricFamily(
    "anonauth_sign_up_quota_refusals_total", .counter, .accounts,
    help: "Sign-ups refused by the per-IP quota.")
  public static let overloadRefusals = MetricFamily(
    "anonauth_overload_refusals_total", .counter, .accounts, labels: ["queue"],
    values: ["queue": ["password_pool", "identity_provider"]],
    help: "Calls refused at once because a bounded queue was full.")
  public static let signInThrottled = MetricFamily(
    "anonauth_sign_in_throttled_total", .counter, .accounts, labels: ["kind"],
    values: ["kind": ["password", "identity_provider"]],
    help: "Sign-ins refused by the failed-sign-in throttles.")
  public static let admissionRefusals = MetricFamily(
    "anonauth_admission_refusals_total", .counter, .accounts, labels: ["work", "limit"],
    values: [
      "work": AdmissionWork.allCases.map(\.description), "limit": Admission.Limit.allCases.map(\.rawValue),
    ],
    help: "Work refused by fair admission, by kind and limit.")
  public static let accounts = MetricFamily(
    "anonauth_accounts", .gauge, .accounts, help: "Accounts in the store.")
  public static let cleanupPasses = MetricFamily(
    "anonauth_cleanup_passes_total", .counter, .accounts, help: "Clean-up passes finished.")
  public static let cleanedUpAccounts = MetricFamily(
    "anonauth_cleaned_up_accounts_total", .counter, .accounts,
    help: "Anonymous accounts deleted by clean-up passes.")
  public static let mails = MetricFamily(
    "anonauth_mails_total", .counter, .accounts, labels: ["outcome"],
    help:
      "Email actions' mails by outcome: sent, retried (a temporary failure, tried again later), failed (given up: a permanent refusal or too many attempts)."
  )

  // MARK: Store

  public static let storeTransactions = MetricFamily(
    "anonauth_store_transactions_total", .counter, .store, help: "Write transactions committed.")
  public static let storeWrites = MetricFamily(
    "anonauth_store_writes_total", .counter, .store, help: "Write jobs committed.")
  public static let storeWriteFailures = MetricFamily(
    "anonauth_store_write_failures_total", .counter, .store, help: "Write jobs that failed.")
  public static let storeWritesDropped = MetricFamily(
    "anonauth_store_writes_dropped_total", .counter, .store,
    help:
      "Write jobs dropped unrun: their call was cancelled (deadline, closed connection) before the writer took them."
  )
  public static let storeBatchSizeAverage = MetricFamily(
    "anonauth_store_batch_size_average", .gauge, .store, help: "Write jobs per transaction, on average.")
  public static let storeHeldBatches = MetricFamily(
    "anonauth_store_held_batches_total", .counter, .store,
    help: "Times the writer held a small batch back for more writes to join it (the commit delay).")
  public static let storeWriterRoundTrips = MetricFamily(
    "anonauth_store_writer_round_trips_total", .counter, .store,
    help:
      "Times the writer waited for the replicated store's leader (0 on the single file); per write job: divide by anonauth_store_writes_total."
  )
  public static let storeWriterRequests = MetricFamily(
    "anonauth_store_writer_requests_total", .counter, .store,
    help:
      "Requests the writer sent to the replicated store's leader, pipelined or not (0 on the single file): its round trips if each waited."
  )
  public static let storeQueuedWrites = MetricFamily(
    "anonauth_store_queued_writes", .gauge, .store, help: "Write jobs waiting for the writer.")
  public static let storeCommitSeconds = MetricFamily(
    "anonauth_store_commit_seconds_total", .counter, .store, help: "Time spent committing.")
  public static let storeCheckpoints = MetricFamily(
    "anonauth_store_checkpoints_total", .counter, .store,
    help: "WAL checkpoints by the background checkpointer.")
  public static let storeWriterCheckpoints = MetricFamily(
    "anonauth_store_writer_checkpoints_total", .counter, .store,
    help: "WAL checkpoints the writer ran itself: the rest of a background pass, or past the limit.")
  public static let storeWALLimitCheckpoints = MetricFamily(
    "anonauth_store_wal_limit_checkpoints_total", .counter, .store,
    help: "WAL checkpoints the writer ran because the WAL outgrew its limit.")
  public static let storeBatchSize = MetricFamily(
    "anonauth_store_batch_size", .histogram, .store, help: "Write jobs per committed transaction.")
  public static let storeCommitDuration = MetricFamily(
    "anonauth_store_commit_duration_seconds", .histogram, .store,
    help: "Time in COMMIT (the fsync), per transaction.")
  public static let storeWriteDuration = MetricFamily(
    "anonauth_store_write_duration_seconds", .histogram, .store,
    help: "Time from a write's submission to its acknowledgement, per committed write.")

  /// Every family, in the order `/metrics` writes them.
  public static let all: [MetricFamily] = [
    rpcCalls, rpcDuration, connectionsOpen, connectionsRejected, connections, handlersRunning,
    handlersRunningPeak, bufferedBytes, bufferBudgetRefusals, callsOverBufferBudget,
    http2HeaderListsRefused, http2StreamsRefusedOverOutputBudget, http2OutputOverBudget,
    http2ConnectionsCalmed,
    callLogLinesSuppressed,
    loopTurn, loopTurnMax,
    residentMemory, cpuSeconds, openFDs, maxFDs, threads,
    signUps, links, signUpQuotaRefusals, overloadRefusals, signInThrottled, admissionRefusals,
    accounts, cleanupPasses, cleanedUpAccounts, mails,
    storeTransactions, storeWrites, storeWriteFailures, storeWritesDropped, storeBatchSizeAverage,
    storeHeldBatches, storeWriterRoundTrips, storeWriterRequests, storeQueuedWrites, storeCommitSeconds,
    storeCheckpoints,
    storeWriterCheckpoints,
    storeWALLimitCheckpoints, storeBatchSize, storeCommitDuration, storeWriteDuration,
  ]
}
