import Glibc

/// A file holding a secret the daemon starts with (the master key, the TLS private key,
/// the admin key): it must be the daemon's alone. One that group or others may read or
/// write stops the start with the `chmod` to run, instead of being accepted silently: a
/// master key readable by every local user is every account's signing key.
///
/// One exception, as PostgreSQL makes for its key file: a file owned by root that its
/// group may read (not write) and others may not touch at all, when the daemon is not
/// root. A non-root daemon can read such a file only through that group, so the
/// deployment chose to hand it over that way: a Kubernetes Secret mounted with `fsGroup`
/// (root:fsGroup, at least 0440), a systemd credential (root-owned, read through an ACL
/// that shows as group bits), a key in /etc kept root:anonauth 0640.
enum SecretFile {
  /// - Parameter setting: the flag that named the file, for the message.
  /// - Throws: `ConfigError` naming the file, its mode and the `chmod` to run. A file that
  ///   cannot be looked at is left to the reader, which says "cannot read it".
  static func check(_ path: String, setting: String) throws(ConfigError) {
    if let problem = problem(path, processIsRoot: geteuid() == 0) {
      throw ConfigError("\(setting) \(path): \(problem)")
    }
  }

  /// What is wrong with `path`'s permissions, nil when nothing is. Follows symbolic links
  /// (a Kubernetes Secret's files are links into `..data/`): the target's mode is what
  /// protects the secret.
  static func problem(_ path: String, processIsRoot: Bool) -> String? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    let mode = status.st_mode & 0o7777
    let readThroughRootsGroup = status.st_uid == 0 && !processIsRoot && mode & 0o037 == 0
    guard mode & 0o077 != 0, !readThroughRootsGroup else { return nil }
    let open = mode & 0o022 != 0 ? "write" : "read"
    return
      "mode \(String(mode, radix: 8)) lets group or others \(open) this secret; run: chmod 600 \(path)"
  }
}
