import CShims

/// The daemon holds the master key, every signing key and, in flight, passwords and admin
/// keys: a core file (written where the crash happened, or kept by systemd-coredump or
/// apport for anyone who reads crash reports) would hold them all. Core dumps are off
/// from the first instruction of `Daemon.run`, before any secret is read, whatever the
/// shell's `ulimit -c` or the unit's LimitCORE said. A crash still leaves its backtrace
/// on stderr; to debug one with a core, run a build of your own with this call removed.
enum CoreDumps {
  /// Sets RLIMIT_CORE to 0 and PR_SET_DUMPABLE to 0; false when the kernel refused either
  /// (the daemon warns and goes on).
  static func disable() -> Bool {
    anonauth_disable_core_dumps() == 0
  }
}
