/// The one error type that crosses the wire: a status code, a stable reason, a message
/// for people and string details for programs.
///
/// The store's errors, which know nothing of the wire, are mapped into it in one place,
/// where the service layer calls the store (`ServiceEnvironment.storeFailure`); a
/// documented failure is thrown as an `RPCError` from where it is found.
public struct RPCError: Error, Hashable, Sendable, CustomStringConvertible {
  public var code: StatusCode
  public var reason: String
  public var message: String
  public var details: [String: String]

  public init(code: StatusCode, reason: String, message: String, details: [String: String] = [:]) {
    self.code = code
    self.reason = reason
    self.message = message
    self.details = details
  }

  /// An error for a documented reason; its status code comes from the reason.
  public init(_ reason: Reason, _ message: String, details: [String: String] = [:]) {
    self.init(code: reason.code, reason: reason.name, message: message, details: details)
  }

  public var description: String { "\(code) \(reason): \(message)" }
}
