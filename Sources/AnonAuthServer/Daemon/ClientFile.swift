import Foundation

/// `DATA_DIR/client.json` (0600): how the CLI on this machine reaches the daemon after
/// `make run` with no set-up. The daemon rewrites `rpc`, `ops` and `ca_file` on every
/// start and keeps every other key already in the file (the raw admin key lives only
/// there).
public enum ClientFile {
  /// The string values of an existing file; empty when there is none.
  public static func read(at path: String) -> [String: String] {
    guard let data = FileManager.default.contents(atPath: path),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return [:] }
    return object.compactMapValues { $0 as? String }
  }

  public static func update(
    at path: String, rpc: String, ops: String, caFile: String, extra: [String: String]
  ) throws(ConfigError) {
    var object: [String: Any] = [:]
    if let data = FileManager.default.contents(atPath: path),
      let existing = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    {
      object = existing
    }
    for (key, value) in extra { object[key] = value }
    object["rpc"] = rpc
    object["ops"] = ops
    object["ca_file"] = caFile
    guard
      let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    else {
      throw ConfigError("\(path): cannot encode")
    }
    try DataDirectory.writeFile(path, Array(data) + [10], mode: 0o600)
  }
}
