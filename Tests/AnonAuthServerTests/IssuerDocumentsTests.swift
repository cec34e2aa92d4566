import AnonAuthCrypto
import AnonAuthNet
import AnonAuthService
import AnonAuthServiceTestSupport
import AnonAuthStore
import Foundation
import Testing

@testable import AnonAuthServer

/// The OpenID issuer's documents on the RPC port: discovery under the public URL for a
/// project that exists, the keys with their caching headers, and 304 to a tag that
/// matches; everything else goes on to the Firebase API.
@Suite struct IssuerDocumentsTests {
  /// What the Firebase API would answer: a 404 marked as its own.
  struct Behind: HTTPApplication {
    func respond(to request: HTTPRequest, info: HTTPCallInfo) async -> HTTPReply {
      HTTPReply(status: 404, headers: [("x-behind", "1")])
    }
  }

  static func with(_ body: (TokenMinter, IssuerDocuments) async throws -> Void) async throws {
    try await TestStore.with("issuer", signingThreads: 1) { opened in
      let minter = TokenMinter(
        store: opened.store, clock: ManualClock(), masterKey: try SecureRandom.bytes(32),
        issuerPrefix: "https://anonauth.local/", pool: opened.pool)
      try await minter.start()
      try await body(minter, IssuerDocuments(api: Behind(), minter: minter, projectExists: { $0 == "p1" }))
    }
  }

  func get(
    _ app: IssuerDocuments, _ path: String, headers: [(name: String, value: String)] = [],
    listener: HTTPListenerKind = .rpcPort, method: String = "GET"
  ) async -> HTTPReply {
    await app.respond(
      to: HTTPRequest(method: method, path: path, headers: headers),
      info: HTTPCallInfo(peerIP: "127.0.0.1", listener: listener, requestID: "t"))
  }

  func header(_ reply: HTTPReply, _ name: String) -> String? {
    reply.headers.first { $0.name == name }?.value
  }

  func json(_ reply: HTTPReply) throws -> [String: JSONValue] {
    try #require(JSONValue(lenientJSONBytes: reply.body)?.objectValue)
  }

  @Test func withoutAPublicURLTheKeysAreServedButNoDiscovery() async throws {
    try await Self.with { minter, app in
      let jwks = await get(app, "/.well-known/jwks.json")
      #expect(jwks.status == 200)
      #expect(String(decoding: jwks.body, as: UTF8.self) == minter.publicKeys().jwks)
      #expect(header(jwks, "cache-control") == "public, max-age=\(TokenMinter.publicKeysMaxAgeSeconds)")
      #expect(header(jwks, "etag") == ConditionalGET.entityTag(jwks.body))
      let x509 = await get(app, "/x509")
      #expect(x509.status == 200)
      let certificates = try json(x509)
      #expect(certificates.keys.sorted() == minter.publicKeys().certificates.keys.sorted())
      #expect(header(await get(app, "/p1/.well-known/openid-configuration"), "x-behind") == "1")
    }
  }

  @Test func underAPublicURLEachProjectHasItsDiscoveryDocument() async throws {
    try await Self.with { minter, app in
      minter.setPublicURL("https://auth.example.test/base")
      let reply = await get(app, "/base/p1/.well-known/openid-configuration")
      #expect(reply.status == 200)
      let document = try json(reply)
      #expect(document["issuer"]?.stringValue == "https://auth.example.test/base/p1")
      #expect(document["jwks_uri"]?.stringValue == "https://auth.example.test/base/.well-known/jwks.json")
      #expect(document["id_token_signing_alg_values_supported"]?.arrayValue == [.string("RS256")])
      #expect(document["response_types_supported"]?.arrayValue == [.string("id_token")])
      #expect(document["subject_types_supported"]?.arrayValue == [.string("public")])
      #expect(header(reply, "content-type") == "application/json")
      #expect(header(reply, "cache-control") == "public, max-age=\(TokenMinter.publicKeysMaxAgeSeconds)")
      #expect((await get(app, "/base/.well-known/jwks.json")).status == 200)
      // An unknown project, a path outside the base, another listener, a POST: the API's.
      for path in [
        "/base/p2/.well-known/openid-configuration", "/.well-known/jwks.json",
        "/base/a/b/.well-known/openid-configuration",
      ] {
        #expect(header(await get(app, path), "x-behind") == "1", "\(path)")
      }
      #expect(header(await get(app, "/base/x509", listener: .emulator), "x-behind") == "1")
      #expect(header(await get(app, "/base/x509", method: "POST"), "x-behind") == "1")
    }
  }

  @Test func aMatchingIfNoneMatchIsAnswered304WithoutABody() async throws {
    try await Self.with { minter, app in
      let first = await get(app, "/.well-known/jwks.json")
      let tag = try #require(header(first, "etag"))
      for sent in [tag, "W/" + tag, "\"other\", " + tag, "*"] {
        let again = await get(app, "/.well-known/jwks.json", headers: [("if-none-match", sent)])
        #expect(again.status == 304, "\(sent)")
        #expect(again.body.isEmpty)
        #expect(header(again, "etag") == tag)
      }
      #expect(
        (await get(app, "/.well-known/jwks.json", headers: [("if-none-match", "\"other\"")])).status == 200)
      // A rotation publishes a new key: the tag changes and the old one no longer matches.
      _ = try await minter.rotate()
      let rotated = await get(app, "/.well-known/jwks.json", headers: [("if-none-match", tag)])
      #expect(rotated.status == 200)
      #expect(header(rotated, "etag") != tag)
    }
  }

  @Test func publicURLsAreHTTPSWithAHostAndLoseTheirTrailingSlash() throws {
    #expect(try IssuerURL.parsePublicURL("") == nil)
    #expect(try IssuerURL.parsePublicURL("https://auth.example.com/") == "https://auth.example.com")
    #expect(try IssuerURL.parsePublicURL("https://h:8443/a/b//") == "https://h:8443/a/b")
    for bad in [
      "http://auth.example.com", "auth.example.com", "https://", "https:///x", "https://h/?a=1",
      "https://h/#f",
    ] {
      #expect(throws: ConfigError.self, "\(bad)") { try IssuerURL.parsePublicURL(bad) }
    }
    #expect(IssuerDocuments.basePath(of: "https://h:1/a/b") == "/a/b")
    #expect(IssuerDocuments.basePath(of: "https://h:1") == "")
    #expect(IssuerURL.dev(rpc: try SocketAddress(parsing: "127.0.0.1:7443")) == "https://127.0.0.1:7443")
    #expect(IssuerURL.dev(rpc: try SocketAddress(parsing: "0.0.0.0:7443")) == "https://localhost:7443")
    #expect(IssuerURL.dev(rpc: try SocketAddress(parsing: "[::1]:7443")) == "https://[::1]:7443")
  }
}
