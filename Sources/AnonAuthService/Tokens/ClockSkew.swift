/// How far apart this server's clock and another's may be, declared once for the token
/// code. Clocks drift within seconds on a synchronised host; the margins are generous
/// because a refused token costs an end user a sign-in, and neither widens what a
/// stolen token is worth by much.
enum ClockSkew {
  /// Allowed on a provider's ID token (`exp`, `iat`, `nbf`, `auth_time`): the OIDC
  /// providers' and Firebase's tokens alike.
  static let providerTokenSeconds: Int64 = 60
  /// How long a retired signing key stays published after the last token it signed
  /// expires, for verifiers whose clocks lag this server's.
  static let publishedKeyMs: Int64 = 300_000
}
