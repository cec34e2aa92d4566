import Glibc

/// Tries the node's TCP address before libdqlite does: binds and listens on it with a
/// socket of its own, then closes that socket.
///
/// Why: libdqlite 1.11.1 listens on its node's thread, and when that `listen` fails
/// `dqlite_node_start` waits for ever for a thread that will never say it is ready. A port
/// another process listens on, or an address that is not this machine's, is reported here
/// at once instead, with the address and the system's reason. (`DqliteNode.start` also
/// runs the start under a deadline, for what a check made a moment earlier cannot see.)
public enum ListenCheck {
  /// Throws `DqliteError.io` naming `address` when this process cannot listen on it. An
  /// abstract unix socket ("@name") is left to libdqlite.
  ///
  /// SO_REUSEADDR is set as libdqlite sets it, so a port whose earlier connections linger
  /// in TIME_WAIT after a restart passes, as it does for the node.
  public static func check(_ address: String) throws(DqliteError) {
    guard !address.hasPrefix("@") else { return }
    let (host, port) = try DqliteSocket.split(address)
    switch DqliteSocket.listening(host, port, backlog: 1) {
    case .success(let fd):
      close(fd)
    case .failure(let failure):
      let step = failure.step == .socket ? "socket: " : ""
      throw .io("cannot listen on \(address): \(step)\(failure.reason)")
    }
  }
}
