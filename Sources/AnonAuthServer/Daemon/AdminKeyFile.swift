import Foundation

/// `--admin-key-file`: how an operator gets the first admin key outside `--dev`. The
/// operator makes a key (`openssl rand -hex 32`), keeps it where deployments keep secrets
/// (a Kubernetes Secret, a compose secret, systemd credentials) and hands the daemon the
/// file. On start the daemon stores the key's SHA-256 as the admin key labelled
/// `admin-key-file`, replacing the one that label had: changing the file and restarting
/// rotates the key. The daemon never writes the raw key anywhere.
enum AdminKeyFile {
  static let label = "admin-key-file"

  /// Reads and checks the key: 32 to 512 printable ASCII characters, no spaces
  /// (whitespace around it, such as a final newline, is ignored).
  /// - Throws: `ConfigError` naming the file, never showing its contents.
  static func load(path: String) throws(ConfigError) -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ConfigError("--admin-key-file \(path): cannot read it")
    }
    let key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard (32...512).contains(key.utf8.count), key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
      throw ConfigError(
        "--admin-key-file \(path): expected 32 to 512 printable ASCII characters without spaces "
          + "(make one with: openssl rand -hex 32)")
    }
    return key
  }
}
