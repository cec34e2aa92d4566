import AnonAuthServer
import Testing

/// What `DaemonConfig.resolve` says when it refuses `arguments` and `environment`; when
/// it accepts them, an issue is recorded and the answer is "". Every config suite checks
/// its refusals through this one function.
func configRefusal(
  _ arguments: [String], environment: [String: String] = [:],
  sourceLocation: SourceLocation = #_sourceLocation
) -> String {
  do {
    _ = try DaemonConfig.resolve(arguments: arguments, environment: environment)
    Issue.record("accepted \(arguments) \(environment)", sourceLocation: sourceLocation)
    return ""
  } catch {
    return error.description
  }
}
