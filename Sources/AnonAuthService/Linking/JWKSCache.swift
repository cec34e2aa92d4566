import AnonAuthCrypto
import AnonAuthWire
import Synchronization

/// Identity providers' public keys: parsed once per inline `jwks_json`, and fetched from
/// `jwks_url` over HTTPS and kept as long as the response's `Cache-Control` allows. The
/// Firebase session exchange keeps Google's x509 certificate map here too
/// (`KeySetFormat.x509`), cached apart from any JWKS at the same URL.
///
/// - Without `max-age` keys are kept 5 minutes; any lifetime is clamped to 30 s ... 24 h,
///   so `no-store` cannot turn every sign-in into a fetch.
/// - Concurrent misses for one URL share one fetch.
/// - A token whose `kid` is unknown forces one refetch (the provider rotated its keys),
///   at most every 30 s per URL.
/// - When a refetch fails, the expired keys are still used for up to an hour
///   (stale-if-error), so a provider's brief outage does not stop sign-ins.
final class JWKSCache: Sendable {
  static let defaultLifetimeMs: Int64 = 300_000
  static let lifetimeRangeMs: ClosedRange<Int64> = 30_000...86_400_000
  static let refetchIntervalMs: Int64 = 30_000
  static let staleIfErrorMs: Int64 = 3_600_000
  static let maximumInline = 256

  private struct Fetched: Sendable {
    let set: JWKSet
    let fetchedAtMs: Int64
    let freshUntilMs: Int64
  }

  private struct State: Sendable {
    var fetched: [String: Fetched] = [:]
    var inFlight: [String: Task<Result<Fetched, RPCError>, Never>] = [:]
    var inline: [[UInt8]: JWKSet] = [:]
  }

  private let outbound: any OutboundHTTP
  private let clock: any ServiceClock
  private let state = Mutex(State())

  init(outbound: any OutboundHTTP, clock: any ServiceClock) {
    self.outbound = outbound
    self.clock = clock
  }

  /// The keys of an inline `jwks_json` (or, with `.x509`, an inline certificate map).
  /// - Throws: `INVALID_IDP_RESPONSE` when it holds no usable key.
  func inline(_ json: String, format: KeySetFormat = .jwks) throws(RPCError) -> JWKSet {
    let digest = SHA256.hash(Array(Self.cacheKey(json, format).utf8))
    if let set = state.withLock({ $0.inline[digest] }) { return set }
    let set: JWKSet
    do {
      set = try format.parse(Array(json.utf8))
    } catch {
      throw RPCError(.invalidIdpResponse, "the provider's configured keys hold no RS256 or ES256 key")
    }
    state.withLock { state in
      if state.inline.count >= Self.maximumInline { state.inline.removeAll() }
      state.inline[digest] = set
    }
    return set
  }

  /// The keys published at `url`.
  /// - Parameters:
  ///   - refresh: the cached keys lack the token's key id: fetch again unless that was
  ///     done within the last 30 s.
  ///   - format: how the URL's keys are written.
  /// - Throws: `INVALID_IDP_RESPONSE` when no usable keys can be had.
  func keys(url: String, refresh: Bool, format: KeySetFormat = .jwks) async throws(RPCError) -> JWKSet {
    let now = clock.nowMs()
    let key = Self.cacheKey(url, format)
    let cached = state.withLock { $0.fetched[key] }
    if let cached {
      if !refresh && now < cached.freshUntilMs { return cached.set }
      if refresh && now - cached.fetchedAtMs < Self.refetchIntervalMs { return cached.set }
    }
    let task = state.withLock { state in
      if let running = state.inFlight[key] { return running }
      let started = Task { await self.fetch(url, format: format, key: key) }
      state.inFlight[key] = started
      return started
    }
    switch await task.value {
    case .success(let fetched):
      return fetched.set
    case .failure(let error):
      if let cached, now < cached.freshUntilMs + Self.staleIfErrorMs { return cached.set }
      throw error
    }
  }

  /// The state's key for a URL or inline text read in `format`: JWKS keep the bare URL,
  /// so that one URL read in two formats is two entries.
  private static func cacheKey(_ source: String, _ format: KeySetFormat) -> String {
    switch format {
    case .jwks: source
    case .x509: "x509 " + source
    }
  }

  private func fetch(_ url: String, format: KeySetFormat, key: String) async -> Result<Fetched, RPCError> {
    let result = await download(url, format: format)
    state.withLock { state in
      state.inFlight[key] = nil
      if case .success(let fetched) = result { state.fetched[key] = fetched }
    }
    return result
  }

  private func download(_ url: String, format: KeySetFormat) async -> Result<Fetched, RPCError> {
    let response: OutboundResponse
    do {
      response = try await outbound.get(url)
    } catch let error as RPCError {
      return .failure(error)  // the provider's concurrency bound
    } catch {
      return .failure(RPCError(.invalidIdpResponse, "the provider's keys could not be fetched: \(error)"))
    }
    guard response.status == 200 else {
      return .failure(RPCError(.invalidIdpResponse, "the provider's keys URL answered \(response.status)"))
    }
    guard let set = try? format.parse(response.body) else {
      return .failure(RPCError(.invalidIdpResponse, "the provider's keys URL holds no RS256 or ES256 key"))
    }
    let now = clock.nowMs()
    let lifetime = response.freshnessSeconds.map { Int64($0) * 1000 } ?? Self.defaultLifetimeMs
    let clamped = min(max(lifetime, Self.lifetimeRangeMs.lowerBound), Self.lifetimeRangeMs.upperBound)
    return .success(Fetched(set: set, fetchedAtMs: now, freshUntilMs: now + clamped))
  }
}
