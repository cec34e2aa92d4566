/// One rpc of a service as its .proto declares it: the path a call names on the wire and
/// the types of its request and response. `make proto` generates one per rpc
/// (`AccountServiceMethods.signUp`), so that neither the router, the clients nor the CLI
/// spell a path or pair a request with the wrong response.
public struct MethodDescriptor<Request: ProtoMessage, Response: ProtoMessage>: Sendable, Hashable {
  /// The fully qualified service, "anonauth.v1.AccountService".
  public let service: String
  /// The rpc's name in the .proto, "SignUp".
  public let name: String

  public init(_ service: String, _ name: String) {
    self.service = service
    self.name = name
  }

  /// The method path a `Call` frame carries: "/anonauth.v1.AccountService/SignUp".
  public var path: String { "/\(service)/\(name)" }
}
