/// The one error type that crosses the wire: a status code, a stable reason, a message
/// for people and string details for programs.
///
/// Domain errors convert into it once, at the edge (`RPCErrorConvertible`), so the
/// mapping from failures to codes lives in one place.
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

/// A domain error that knows which `RPCError` it is on the wire.
public protocol RPCErrorConvertible: Error {
  var rpcError: RPCError { get }
}
