/// What a handler knows about the call it serves, without knowing about sockets.
public struct CallContext: Sendable {
  /// The full method path, "/anonauth.v1.<Service>/<Method>".
  public let method: String
  /// The call's metadata; keys are lowercase.
  public let metadata: [String: String]
  /// The socket peer's IP address (no port), for quotas and trusted-proxy checks.
  public let peerIP: String?
  /// The caller's `x-request-id`, or one the server made.
  public let requestID: String
  /// Where the handler reports the project and account for the call's log line.
  public let log: CallLogFields
  /// The common name of the caller's verified client certificate (mutual TLS), or nil:
  /// a service caller the operator issued a certificate to.
  public let clientCertificateName: String?
  /// Called by the router once the call's credential check has passed, with the kind of
  /// credential: the transport lets a connection send large frames only after an
  /// admin-key call passed (`RPCServerConfig.maxUnauthenticatedFrameSize`).
  public let authenticated: (@Sendable (CallCredential) -> Void)?

  public init(
    method: String, metadata: [String: String], peerIP: String?, requestID: String,
    log: CallLogFields = CallLogFields(), clientCertificateName: String? = nil,
    authenticated: (@Sendable (CallCredential) -> Void)? = nil
  ) {
    self.method = method
    self.metadata = metadata
    self.peerIP = peerIP
    self.requestID = requestID
    self.log = log
    self.clientCertificateName = clientCertificateName
    self.authenticated = authenticated
  }
}

/// The credential a call's check accepted.
public enum CallCredential: Sendable, Equatable {
  /// A project's API key: public, it proves nothing about the caller.
  case apiKey
  /// The admin key (a secret): the caller is the operator or a service it trusts.
  case adminKey
}
