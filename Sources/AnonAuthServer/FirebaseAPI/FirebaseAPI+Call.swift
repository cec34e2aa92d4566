import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Synchronization

extension FirebaseAPI {
  /// One request on its way through an endpoint: the decoded body, the native metadata it
  /// implies, and the way to make native calls through the router.
  public final class Call: Sendable {
    public let request: HTTPRequest
    public let info: HTTPCallInfo
    /// The JSON object of the body, or a form's fields as strings; empty for no body.
    public let body: [String: JSONValue]
    /// The query string's parameters, percent-decoded (the first of repeated names wins).
    public let query: [String: String]
    /// The `{name}` segments of the endpoint's path, percent-decoded.
    public let pathParameters: [String: String]
    /// What native calls carry: `x-api-key` (from `?key=` or `x-goog-api-key`),
    /// `authorization`, `x-end-user-ip` (from `X-Forwarded-For`), `x-request-id`.
    public let metadata: [String: String]
    /// Shared by every native call of the request, for its one log line.
    public let log = CallLogFields()
    let router: Router
    /// --dev: the codes sent (`emulatorOobCodes`).
    let devMailbox: DevMailbox?
    private let nativeMethod = Mutex<String?>(nil)

    init(api: FirebaseAPI, request: HTTPRequest, info: HTTPCallInfo, pathParameters: [String: String])
      throws(FirebaseError)
    {
      self.request = request
      self.info = info
      self.router = api.router
      self.devMailbox = api.devMailbox
      self.query = FormDecoding.fields(request.query)
      self.pathParameters = pathParameters.mapValues { FormDecoding.percentDecoded($0, plusIsSpace: false) }
      self.body = try RequestBody.decode(request)
      self.metadata = Self.metadata(request, query: query, requestID: info.requestID)
    }

    /// The native method the request called last, which its metrics count.
    var lastNativeMethod: String? { nativeMethod.withLock { $0 } }

    static func metadata(_ request: HTTPRequest, query: [String: String], requestID: String) -> [String:
      String]
    {
      var metadata = ["x-request-id": requestID]
      if let key = query["key"] ?? request.header("x-goog-api-key") { metadata["x-api-key"] = key }
      if let authorization = request.header("authorization") { metadata["authorization"] = authorization }
      // The address the nearest proxy saw is the last one it appended; the native rule
      // (trusted proxies, admin key, client certificate) decides whether it counts.
      if let forwarded = request.header("x-forwarded-for"), let last = ASCIIText.lastListItem(forwarded) {
        metadata["x-end-user-ip"] = last
      }
      return metadata
    }

    /// Makes one native call through the router's typed entry (`Router.call`): the same
    /// checks in the same order as a binary-transport call of `method` (method known,
    /// credential, the decode bounds of a batch), then the handler with `message` as it
    /// is, and its response as it is: no encoding on the way in or out.
    public func native<Request: ProtoMessage, Response: ProtoMessage>(
      _ method: MethodDescriptor<Request, Response>, _ message: Request,
      metadata extra: [String: String] = [:]
    ) async throws(FirebaseError) -> Response {
      nativeMethod.withLock { $0 = method.path }
      let context = CallContext(
        method: method.path, metadata: extra.isEmpty ? metadata : metadata.merging(extra) { _, new in new },
        peerIP: info.peerIP, requestID: info.requestID, log: log,
        clientCertificateName: info.clientCertificateName)
      do throws(RPCError) {
        return try await router.call(method, message, context: context)
      } catch {
        throw FirebaseError(error)
      }
    }

    /// The string member `key` (the first of `keys` present); nil when absent or null.
    /// Another type is Firebase's 400 "Invalid value at ..." answer.
    public func string(_ keys: String...) throws(FirebaseError) -> String? {
      try firstString(keys)
    }

    private func firstString(_ keys: [String]) throws(FirebaseError) -> String? {
      for key in keys {
        switch body[key] {
        case nil, .null?: continue
        case .string(let value)?: return value
        default: throw FirebaseError.invalidValue(key, expected: "TYPE_STRING")
        }
      }
      return nil
    }

    /// The boolean member `key`; false when absent. A string "true"/"false" counts, as
    /// Google's JSON mapping accepts it (and a form sends nothing else).
    public func bool(_ key: String) throws(FirebaseError) -> Bool {
      switch body[key] {
      case nil, .null?: return false
      case .bool(let value)?: return value
      case .string("true")?: return true
      case .string("false")?: return false
      default: throw FirebaseError.invalidValue(key, expected: "TYPE_BOOL")
      }
    }

    /// The array of strings `key`; empty when absent.
    public func strings(_ key: String) throws(FirebaseError) -> [String] {
      switch body[key] {
      case nil, .null?: return []
      case .string(let value)?: return [value]
      case .array(let items)?:
        var out: [String] = []
        for item in items {
          guard case .string(let value) = item else {
            throw FirebaseError.invalidValue(key, expected: "TYPE_STRING")
          }
          out.append(value)
        }
        return out
      default: throw FirebaseError.invalidValue(key, expected: "TYPE_STRING")
      }
    }

    /// `string(keys)` that must be present and non-empty, else `MISSING_<NAME>`-style 400.
    public func required(_ missing: String, _ keys: String...) throws(FirebaseError) -> String {
      if let value = try firstString(keys), !value.isEmpty { return value }
      throw FirebaseError(status: 400, message: missing)
    }
  }
}
