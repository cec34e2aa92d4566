import AnonAuthService
import Testing

/// A caller with a verified client certificate (`--client-ca-file`) is trusted for
/// `x-end-user-ip`, like one with the admin key or a `--trusted-proxies` peer: whoever can
/// get such a certificate can choose which address a sign-up is counted against.
@Suite("x-end-user-ip and client certificates")
struct ClientCertificateTrustTests {
  func context(certificate: String?, claim: String) -> CallContext {
    CallContext(
      method: "/anonauth.v1.AccountService/SignUp", metadata: ["x-end-user-ip": claim],
      peerIP: "198.51.100.7",
      requestID: "r", clientCertificateName: certificate)
  }

  @Test("with a verified client certificate the claim is believed")
  func certified() {
    let policy = EndUserIPPolicy(trustedProxies: [])
    #expect(
      policy.endUserIP(context(certificate: "svc", claim: "192.0.2.1"), callerIsAdmin: false) == "192.0.2.1")
    // Even a certificate with no common name counts: the CA verified it.
    #expect(
      policy.endUserIP(context(certificate: "", claim: "192.0.2.2"), callerIsAdmin: false) == "192.0.2.2")
    // An unparsable claim falls back to the peer.
    #expect(
      policy.endUserIP(context(certificate: "svc", claim: "nonsense"), callerIsAdmin: false) == "198.51.100.7"
    )
  }

  @Test("without one (and no admin key, no trusted proxy) the peer counts")
  func uncertified() {
    let policy = EndUserIPPolicy(trustedProxies: [])
    #expect(
      policy.endUserIP(context(certificate: nil, claim: "192.0.2.1"), callerIsAdmin: false) == "198.51.100.7")
  }
}
