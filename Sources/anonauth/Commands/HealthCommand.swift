import AnonAuthRPCClient
import AnonAuthWire

/// `anonauth health`: asks HealthService/Check. Exit 0 when SERVING, 1 otherwise, so it
/// serves as a container HEALTHCHECK.
enum HealthCommand {
  static let summary = "check that the daemon serves (exit 0 when SERVING)"
  static let help = """
    Usage: anonauth health [options]

    Calls HealthService/Check and prints SERVING or NOT_SERVING.
    Exit status: 0 when SERVING, 1 otherwise, 2 on a usage error.

    \(Connection.help)
    """

  static func run(_ arguments: Arguments) async throws(CLIError) {
    let connection = try Connection(arguments)
    let response: CheckResponse
    do {
      response = try await HealthServiceClient(connection.client).check(CheckRequest())
    } catch {
      throw .failed("health check failed: \(error.code) \(error.reason): \(error.message)")
    }
    if arguments.has("json") {
      print("{\"status\":\"\(response.status)\"}")
    } else {
      print(response.status)
    }
    if response.status != "SERVING" { throw .failed("") }
  }
}
