import Foundation

/// The admin key for AdminService calls, read from a file, never from the command line
/// (where `ps` would show it): `--admin-key-file`, else the file named by
/// ANONAUTH_ADMIN_KEY_FILE, else client.json's `admin_key` (`--dev`).
///
/// A key of the operator's own (the flag or the variable) goes only to a daemon the
/// operator named: by `--rpc`/ANONAUTH_RPC (with `--ca-file` or the system's CAs), or
/// through a `client.json` named by `--data-dir`/ANONAUTH_DATA_DIR. The default
/// `./anonauth-data/client.json` is whatever the current directory holds (a cloned
/// repository, a shared folder): its address and CA are trusted only with the key that
/// file itself carries.
enum AdminKey {
  static func read(_ connection: Connection) throws(CLIError) -> String {
    let environment = ProcessInfo.processInfo.environment
    let flag = connection.arguments["admin-key-file"]
    if let path = flag ?? environment["ANONAUTH_ADMIN_KEY_FILE"] {
      let source = flag != nil ? "--admin-key-file" : "ANONAUTH_ADMIN_KEY_FILE"
      if let setting = connection.implicitDestination {
        throw .usage(
          "not sending the admin key of \(source) to a daemon named by \(connection.dataDir)/client.json: "
            + "that file was found in the current directory, not given by you, and \(setting) came from it; "
            + "pass --rpc HOST:PORT (and --ca-file FILE), or --data-dir DIR if you trust that client.json")
      }
      guard let data = FileManager.default.contents(atPath: path) else {
        throw .usage("\(source) \(path): cannot read it")
      }
      let key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      guard !key.isEmpty else { throw .usage("\(source) \(path): empty") }
      return key
    }
    guard let key = connection.file["admin_key"] else {
      throw .usage("no admin key: pass --admin-key-file FILE (client.json has none)")
    }
    return key
  }
}
