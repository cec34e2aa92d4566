import AnonAuthService
import AnonAuthWire

/// Where the daemon sends `FirebaseAPI`'s records: metrics under the native method each
/// request called, so both transports add up in the same series, and the one log line
/// whose `method` is the REST name, with the HTTP status beside the code. The same shape
/// as a native call's line (`ServerCore.logCall`).
public struct FirebaseCallLog: Sendable {
  let logger: Logger
  let metrics: ServerMetrics
  let router: Router

  public init(logger: Logger, metrics: ServerMetrics, router: Router) {
    self.logger = logger
    self.metrics = metrics
    self.router = router
  }

  public func record(_ record: FirebaseCallRecord) {
    let code = record.error?.code ?? .ok
    let method = record.nativeMethod.flatMap { router.knows($0) ? $0 : nil } ?? "unknown"
    metrics.recordCall(method: method, code: code, nanos: record.nanos)
    guard logger.isEnabled(.info) else { return }
    var line = record.fields.logFields
    line["request_id"] = .string(record.requestID)
    line["method"] = .string(record.name)
    line["code"] = .int(Int64(code.rawValue))
    line["reason"] = .string(record.error?.reason ?? "")
    line["http_status"] = .int(Int64(record.httpStatus))
    line["duration_ms"] = .double(Double(record.nanos) / 1e6)
    logger.info("call", line)
  }
}
