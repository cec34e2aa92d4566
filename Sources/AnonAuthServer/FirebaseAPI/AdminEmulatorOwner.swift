/// The Firebase API as the daemon serves it over HTTP, with the one rule that depends on
/// the listener: on the emulator listener only, the Firebase Admin SDK's
/// `Authorization: Bearer owner` (what every Admin SDK sends when
/// `FIREBASE_AUTH_EMULATOR_HOST` is set) stands for the admin key.
///
/// Why that is safe there and nowhere else: the emulator listener is plain HTTP bound to
/// a loopback address only (the daemon refuses any other address), so only processes on
/// the same machine reach it, and anything on that machine that can reach it could as
/// well read the data directory. On the RPC port, open to the network, `owner` is a
/// well-known string and is refused like any wrong key (`ADMIN_KEY_INVALID`).
///
/// A browser on the same machine is the one local caller that is not the machine's
/// owner: a page whose name is re-resolved to 127.0.0.1 (DNS rebinding) reaches the
/// listener as its own origin. So `owner` counts only when the request names a loopback
/// `Host` and carries no `Origin`, as every Admin SDK's requests do and no page's can.
///
/// The request is not special-cased further down: `Bearer owner` becomes
/// `Bearer <a key this process made for itself>` (`ProjectDirectory.makeProcessAdminKey`,
/// never stored, never shown), so the native admin-key check, logs and metrics are the
/// same as for a real key.
public struct AdminEmulatorOwner: HTTPApplication {
  /// The application behind the gate: `FirebaseAPI`.
  let api: any HTTPApplication
  /// `Bearer <process admin key>`; nil: `Bearer owner` means nothing on any listener.
  let ownerAuthorization: String?
  /// The native admin-key check (`ProjectDirectory.isAdminKey`): cheap, one SHA-256.
  let isAdminKey: @Sendable (String) -> Bool

  /// What the Admin SDK sends in emulator mode.
  static let ownerHeader = "Bearer owner"

  public init(
    api: any HTTPApplication, processAdminKey: String?, isAdminKey: @escaping @Sendable (String) -> Bool
  ) {
    self.api = api
    self.ownerAuthorization = processAdminKey.map { "Bearer \($0)" }
    self.isAdminKey = isAdminKey
  }

  public func respond(to request: HTTPRequest, info: HTTPCallInfo) async -> HTTPReply {
    await api.respond(
      to: Self.substituting(request, on: info.listener, owner: ownerAuthorization), info: info)
  }

  /// `request` with `Bearer owner` replaced by `owner` when it came on the emulator
  /// listener; unchanged otherwise.
  static func substituting(_ request: HTTPRequest, on listener: HTTPListenerKind, owner: String?)
    -> HTTPRequest
  {
    guard let owner, mayStandForAdminKey(request, on: listener) else { return request }
    var out = request
    out.headers = request.headers.map { header in
      header.name == "authorization" && header.value == ownerHeader ? (header.name, owner) : header
    }
    return out
  }

  /// The emulator listener, a loopback `Host`, and no `Origin`: a local program, not a
  /// web page that reached the loopback address by a name of its own.
  static func mayStandForAdminKey(_ request: HTTPRequest, on listener: HTTPListenerKind) -> Bool {
    listener == .emulator && request.header("origin") == nil && isLoopbackHost(request.header("host"))
  }

  /// `localhost`, `127.x.y.z` or `[::1]`, with or without a port.
  static func isLoopbackHost(_ host: String?) -> Bool {
    guard let host = host?.lowercased() else { return false }
    let name: Substring
    if host.hasPrefix("[") {
      guard let close = host.firstIndex(of: "]") else { return false }
      name = host[host.index(after: host.startIndex)..<close]
    } else {
      name = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }
    if name == "localhost" || name == "::1" { return true }
    let octets = name.split(separator: ".", omittingEmptySubsequences: false)
    return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
  }

  /// A large body (an import of many accounts) only with a valid admin key, or with
  /// `Bearer owner` on the emulator listener.
  public func admitsLargeBody(_ head: HTTPRequest, listener: HTTPListenerKind) -> Bool {
    guard let header = head.header("authorization"), header.hasPrefix("Bearer ") else { return false }
    if header == Self.ownerHeader {
      return ownerAuthorization != nil && Self.mayStandForAdminKey(head, on: listener)
    }
    return isAdminKey(String(header.dropFirst(7)))
  }

  public func admitsLargeBody(_ head: HTTPRequest) -> Bool {
    admitsLargeBody(head, listener: .rpcPort)
  }
}
