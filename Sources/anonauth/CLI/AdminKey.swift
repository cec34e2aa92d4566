import Foundation

/// The admin key for AdminService calls, read from a file, never from the command line
/// (where `ps` would show it): `--admin-key-file`, else the file named by
/// ANONAUTH_ADMIN_KEY_FILE, else client.json's `admin_key` (`--dev`).
enum AdminKey {
  static func read(_ connection: Connection) throws(CLIError) -> String {
    let path =
      connection.arguments["admin-key-file"] ?? ProcessInfo.processInfo.environment["ANONAUTH_ADMIN_KEY_FILE"]
    if let path {
      guard let data = FileManager.default.contents(atPath: path) else {
        throw .usage("--admin-key-file \(path): cannot read it")
      }
      let key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      guard !key.isEmpty else { throw .usage("--admin-key-file \(path): empty") }
      return key
    }
    guard let key = connection.file["admin_key"] else {
      throw .usage("no admin key: pass --admin-key-file FILE (client.json has none)")
    }
    return key
  }
}
