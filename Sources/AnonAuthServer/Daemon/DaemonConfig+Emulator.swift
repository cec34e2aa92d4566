import AnonAuthNet

extension DaemonConfig {
  /// `--firebase-emulator-listen`: empty is off; anything else must be a loopback
  /// address. The listener is plain HTTP, and on it the Admin SDK's `Bearer owner`
  /// stands for the admin key: that is safe only where no one but this host's own
  /// processes can connect.
  static func emulatorListen(_ text: String) throws(ConfigError) -> SocketAddress? {
    guard !text.isEmpty else { return nil }
    let address: SocketAddress
    do {
      address = try SocketAddress(parsing: text)
    } catch {
      throw ConfigError("--firebase-emulator-listen: \(error.description)")
    }
    guard address.isLoopback else {
      throw ConfigError(
        "--firebase-emulator-listen: \(text) is not a loopback address (127.0.0.0/8, ::1 or localhost); "
          + "the emulator listener is plain HTTP and must not be reachable from the network")
    }
    return address
  }
}
