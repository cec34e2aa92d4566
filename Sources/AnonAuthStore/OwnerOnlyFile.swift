import Glibc

/// Store files are readable by their owner only, whatever the process's umask: they
/// hold every account, hashed credentials and the encrypted signing keys.
enum OwnerOnlyFile {
  /// Creates `path` empty with mode 0600 when it is missing, and drops group and other
  /// bits from one that exists. SQLite gives the `-wal` and `-shm` files it makes the
  /// mode of their database file, so they follow. In-memory and URI names are left alone.
  ///
  /// An existing file is never opened here, only looked at and changed by its path:
  /// closing any descriptor of a file drops every POSIX lock this process holds on it,
  /// SQLite's included. A connection opened while others were open (the checkpointer's)
  /// once did that, and the next process to close a connection to the store found no
  /// lock, took itself for the last one, and deleted the WAL under the daemon.
  static func prepare(_ path: String) {
    guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
    var status = stat()
    if lstat(path, &status) == 0 {
      if status.st_mode & S_IFMT == S_IFREG && status.st_mode & 0o077 != 0 {
        chmod(path, status.st_mode & 0o700)
      }
      return
    }
    // Missing: nobody can hold a lock on it yet. O_EXCL: if it appeared meanwhile, it is
    // left to SQLite's open as it is.
    let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    if fd >= 0 { close(fd) }
  }
}
