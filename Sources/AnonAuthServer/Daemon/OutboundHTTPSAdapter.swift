import AnonAuthNet
import AnonAuthService

/// Plugs the TLS client of `AnonAuthNet` into the service layer's `OutboundHTTP`, so that
/// the service layer fetches provider keys without knowing about sockets.
struct OutboundHTTPSAdapter: OutboundHTTP {
  let client: HTTPSClient

  func get(_ url: String) async throws -> OutboundResponse {
    let response = try await client.get(url)
    return OutboundResponse(
      status: response.status, body: response.body, freshnessSeconds: response.freshnessSeconds)
  }

  func post(_ url: String, form: [(String, String)]) async throws -> OutboundResponse {
    let response = try await client.postForm(url, body: FormBody.encode(form))
    return OutboundResponse(
      status: response.status, body: response.body, freshnessSeconds: response.freshnessSeconds)
  }
}
