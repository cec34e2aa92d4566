import AnonAuthService

/// The public documents of AnonAuth as an OpenID Connect issuer, served on the RPC port
/// (HTTP/1.1 and h2, no key) in front of the Firebase API, so that any OIDC library
/// configured with a project's issuer URL finds its keys (docs/verifying-tokens.md):
///
/// - `<base>/<project>/.well-known/openid-configuration`: the discovery document, for a
///   project that exists, when a public URL is set (`--public-url`, or `--dev`'s own
///   address): the issuer must be the URL it was fetched under, and only the public URL
///   is known to be that;
/// - `<base>/.well-known/jwks.json` and `<base>/x509`: the keys, as the ops port publishes
///   them.
///
/// `<base>` is the public URL's path ("" for a bare host). Each reply carries
/// `Cache-Control: public, max-age` (`TokenMinter.publicKeysMaxAgeSeconds`; a rotated-in
/// key is published `publishAheadSeconds`, twice that, before it signs), an `ETag`, and
/// answers a matching `If-None-Match` with 304.
public struct IssuerDocuments: HTTPApplication {
  /// What serves every other request: the Firebase API.
  let api: any HTTPApplication
  let minter: TokenMinter
  /// Whether a project id names a project (`ProjectDirectory.project`).
  let projectExists: @Sendable (String) -> Bool

  public init(
    api: any HTTPApplication, minter: TokenMinter, projectExists: @escaping @Sendable (String) -> Bool
  ) {
    self.api = api
    self.minter = minter
    self.projectExists = projectExists
  }

  /// The documents this serves.
  enum Document: Equatable {
    case discovery(projectID: String)
    case jwks
    case x509
  }

  static let discoverySuffix = "/.well-known/openid-configuration"
  static let jwksPath = "/.well-known/jwks.json"
  static let x509Path = "/x509"

  /// The path part of a public URL ("https://host/a/b" → "/a/b"; a bare host → "").
  static func basePath(of publicURL: String?) -> String {
    guard let publicURL else { return "" }
    let afterScheme = publicURL.drop { $0 != ":" }.dropFirst(3)
    return String(afterScheme.drop { $0 != "/" })
  }

  /// Which document `path` names under `base`, if any. A project id is one segment.
  static func document(path: String, base: String, discovery: Bool) -> Document? {
    guard path.hasPrefix(base) else { return nil }
    let rest = path.dropFirst(base.count)
    if rest == jwksPath { return .jwks }
    if rest == x509Path { return .x509 }
    guard discovery, rest.hasPrefix("/"), rest.hasSuffix(discoverySuffix) else { return nil }
    let project = rest.dropFirst().dropLast(discoverySuffix.count)
    guard !project.isEmpty, !project.contains("/") else { return nil }
    return .discovery(projectID: String(project))
  }

  public func respond(to request: HTTPRequest, info: HTTPCallInfo) async -> HTTPReply {
    guard info.listener == .rpcPort, request.method == "GET" || request.method == "HEAD" else {
      return await api.respond(to: request, info: info)
    }
    let publicURL = minter.publicURL
    let base = Self.basePath(of: publicURL)
    guard let document = Self.document(path: request.path, base: base, discovery: publicURL != nil) else {
      return await api.respond(to: request, info: info)
    }
    let maxAge = TokenMinter.publicKeysMaxAgeSeconds
    switch document {
    case .jwks:
      return ConditionalGET.reply(
        Array(minter.publicKeys().jwks.utf8), contentType: "application/json", maxAgeSeconds: maxAge,
        to: request)
    case .x509:
      return ConditionalGET.reply(
        Array(X509JSON.render(minter.publicKeys().certificates).utf8), contentType: "application/json",
        maxAgeSeconds: maxAge, to: request)
    case .discovery(let projectID):
      guard let publicURL, projectExists(projectID) else { return await api.respond(to: request, info: info) }
      let body = DiscoveryDocument.json(
        issuer: minter.issuer(for: projectID), jwksURI: publicURL + Self.jwksPath)
      return ConditionalGET.reply(
        body, contentType: "application/json", maxAgeSeconds: maxAge, to: request)
    }
  }

  public func admitsLargeBody(_ head: HTTPRequest, listener: HTTPListenerKind) -> Bool {
    api.admitsLargeBody(head, listener: listener)
  }

  public func admitsLargeBody(_ head: HTTPRequest) -> Bool {
    api.admitsLargeBody(head)
  }
}
