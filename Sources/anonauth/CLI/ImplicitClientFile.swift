import Glibc

/// The `client.json` found by default in `./anonauth-data` is trusted only if it looks like
/// one `anonauthd --dev` wrote for this user: owned by them and open to nobody else (the
/// daemon writes it 0600). A file from a cloned repository, an unpacked archive or a shared
/// folder is usually neither, and would otherwise receive whatever this command sends: a
/// password typed for sign-in, the session's refresh token.
enum ImplicitClientFile {
  /// Why `path` is not trusted, nil when it is (or when it cannot be looked at: then
  /// nothing was read from it).
  static func distrust(_ path: String) -> String? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    if status.st_mode & S_IFMT != S_IFREG { return "it is not a regular file" }
    if status.st_uid != geteuid() { return "it belongs to uid \(status.st_uid), not you" }
    let mode = status.st_mode & 0o7777
    if mode & 0o077 != 0 { return "its mode \(String(mode, radix: 8)) lets others read or change it" }
    return nil
  }
}
