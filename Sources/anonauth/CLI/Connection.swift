import AnonAuthRPCClient
import Foundation

/// How the CLI reaches the daemon: flags, else `client.json` in the data dir (written by
/// `anonauthd --dev`), so that after `make run` every command works with no set-up.
struct Connection {
  static let switchNames: Set<String> = [
    "insecure", "json", "help", "force-refresh", "check-revoked", "anonymous", "email-password",
    "password-stdin", "id-token-stdin", "access-token-stdin",
  ]
  /// The options of `help` below, which every command takes.
  static let optionNames: Set<String> = [
    "rpc", "ca-file", "server-name", "data-dir", "api-key", "session", "timeout-ms",
  ]
  /// The switches every command takes.
  static let commonSwitches: Set<String> = ["insecure", "json", "help"]
  static let help = """
    Connection options (default: read DATA_DIR/client.json):
      --rpc HOST:PORT[,HOST:PORT...]
                            the daemon's RPC address (or ANONAUTH_RPC); several for a
                            replicated deployment: a call not processed by one goes to the next
      --ca-file FILE        PEM certificate(s) to trust, e.g. the --dev certificate (or
                            ANONAUTH_CA_FILE; default: client.json's, else the system's CAs)
      --server-name NAME    the name the server's certificate must carry (default: the
                            host of --rpc)
      --insecure            skip certificate checks (development only)
      --data-dir DIR        where client.json is (default ./anonauth-data, or ANONAUTH_DATA_DIR);
                            the default one is used only if it is yours and 0600, and never
                            with an admin key from --admin-key-file
      --api-key KEY         the project's API key (or ANONAUTH_API_KEY; default: client.json's)
      --session FILE        where the signed-in session is kept (default DATA_DIR/cli-session.json)
      --timeout-ms N        deadline of each call (default 10000)
      --json                machine-readable output
    """

  let client: RPCClient
  let file: [String: String]
  let dataDir: String
  let arguments: Arguments
  /// The setting the daemon's address or CA came from when it was an implicit
  /// `client.json` (one in `./anonauth-data`, found by default, not named by `--data-dir`
  /// or ANONAUTH_DATA_DIR), else nil. Anyone who can write to the current directory
  /// chose that file: an admin key of the operator's own must not follow it.
  let implicitDestination: String?

  init(_ arguments: Arguments) throws(CLIError) {
    let env = ProcessInfo.processInfo.environment
    let namedDataDir = arguments["data-dir"] ?? env["ANONAUTH_DATA_DIR"]
    let dataDir = namedDataDir ?? "./anonauth-data"
    var file: [String: String] = [:]
    if let data = FileManager.default.contents(atPath: dataDir + "/client.json"),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    {
      for (key, value) in object { if let s = value as? String { file[key] = s } }
    }
    self.file = file
    self.dataDir = dataDir
    self.arguments = arguments
    guard let rpc = arguments["rpc"] ?? env["ANONAUTH_RPC"] ?? file["rpc"] else {
      throw .usage(
        "no daemon address: pass --rpc HOST:PORT or run anonauthd --dev (which writes \(dataDir)/client.json)"
      )
    }
    let namedCAFile = arguments["ca-file"] ?? env["ANONAUTH_CA_FILE"]
    let caFile = namedCAFile ?? file["ca_file"]
    let rpcFromFile = arguments["rpc"] == nil && env["ANONAUTH_RPC"] == nil
    let caFromFile = namedCAFile == nil && file["ca_file"] != nil
    if namedDataDir != nil {
      implicitDestination = nil
    } else if rpcFromFile {
      implicitDestination = "the daemon address (rpc)"
    } else if caFromFile {
      implicitDestination = "the CA file (ca_file)"
    } else {
      implicitDestination = nil
    }
    if let implicitDestination, let why = ImplicitClientFile.distrust(dataDir + "/client.json") {
      throw .usage(
        "not using \(dataDir)/client.json, found in the current directory, for \(implicitDestination): "
          + "\(why) (anonauthd --dev writes it 0600); pass --rpc HOST:PORT (and --ca-file FILE), "
          + "or --data-dir DIR if you trust it")
    }
    let timeout = arguments["timeout-ms"].flatMap { UInt32($0) } ?? 10_000
    do {
      var endpoints: [ClientEndpoint] = []
      for address in rpc.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) })
      where !address.isEmpty {
        var endpoint = try ClientEndpoint(
          address: address, caFile: caFile, insecure: arguments.has("insecure"))
        endpoint.serverName = arguments["server-name"]
        endpoints.append(endpoint)
      }
      client = try RPCClient(endpoints: endpoints, defaultTimeoutMs: timeout)
    } catch {
      throw .usage(error.description)
    }
  }

  /// The API key for AccountService and TokenService calls.
  func apiKey() throws(CLIError) -> String {
    guard
      let key = arguments["api-key"] ?? ProcessInfo.processInfo.environment["ANONAUTH_API_KEY"]
        ?? file["api_key"]
    else { throw .usage("no API key: pass --api-key KEY (client.json has none)") }
    return key
  }

  /// client.json's project when the API key is client.json's too, else nil (a key given
  /// by flag or variable may be any project's).
  var projectOfAPIKey: String? {
    guard arguments["api-key"] == nil, ProcessInfo.processInfo.environment["ANONAUTH_API_KEY"] == nil else {
      return nil
    }
    return file["project_id"]
  }

  /// The signed-in session, persisted across invocations in a 0600 file.
  func auth() throws(CLIError) -> Auth {
    let path = arguments["session"] ?? dataDir + "/cli-session.json"
    return Auth(client: client, apiKey: try apiKey(), store: FileSessionStore(path: path))
  }
}
