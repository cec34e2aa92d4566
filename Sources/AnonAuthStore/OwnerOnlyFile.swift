import Glibc

/// Store files are readable by their owner only, whatever the process's umask: they
/// hold every account, hashed credentials and the encrypted signing keys.
enum OwnerOnlyFile {
  /// Creates `path` empty with mode 0600 when it is missing, and drops group and other
  /// bits from one that exists. SQLite gives the `-wal` and `-shm` files it makes the
  /// mode of their database file, so they follow. In-memory and URI names are left alone.
  static func prepare(_ path: String) {
    guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { return }  // SQLite's own open reports the error.
    defer { close(fd) }
    var status = stat()
    if fstat(fd, &status) == 0 && status.st_mode & 0o077 != 0 {
      fchmod(fd, status.st_mode & 0o700)
    }
  }
}
