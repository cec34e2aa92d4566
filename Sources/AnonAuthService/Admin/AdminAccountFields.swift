import AnonAuthWire

/// The checks an administrator's account fields pass before anything is written: the
/// same limits `ImportAccounts` holds rows to (`ImportRow`), so that every account
/// `CreateAccount` and `UpdateAccount` make exports and imports again unchanged.
enum AdminAccountFields {
  /// A uid: 1 to 128 bytes, no control characters.
  static func checkUID(_ uid: String) throws(RPCError) {
    guard !uid.isEmpty, uid.utf8.count <= ImportRow.maximumUIDBytes, !ProviderText.hasControl(uid) else {
      throw RPCError(.invalidArgument, "local_id must be 1 to 128 bytes without control characters")
    }
  }

  /// A display name or photo URL: at most 2048 bytes, no control characters; "" clears.
  static func checkText(_ value: String, _ name: String) throws(RPCError) {
    guard value.utf8.count <= ImportRow.maximumTextBytes, !ProviderText.hasControl(value) else {
      throw RPCError(.invalidArgument, "\(name) is over 2048 bytes or has control characters")
    }
  }
}
