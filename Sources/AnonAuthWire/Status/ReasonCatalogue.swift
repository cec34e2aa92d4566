/// Every reason the server sends, with when it sends it and what a client should do:
/// the one table docs/reasons.md is generated from (`anonauthd --print-reference reasons`,
/// checked by `make check-reference-docs`), and that tests hold every `Reason` to.
///
/// A new reason is a static on `Reason` (or `GoAwayReason`) plus an entry here; the
/// catalogue's tests fail on a static without an entry.
public enum ReasonCatalogue {
  /// Where a reason comes from, for the page's sections.
  public enum Group: String, Sendable, CaseIterable {
    case auth = "Sign-in, tokens and accounts"
    case admin = "Administration (AdminService)"
    case transport = "Any call (transport level)"
  }

  /// One reason a call can fail with.
  public struct Entry: Sendable {
    public let reason: Reason
    public let group: Group
    /// When the server sends it.
    public let when: String
    public let action: ClientAction
    /// The specifics of `action` for this reason.
    public let advice: String
  }

  /// One reason a whole connection can be closed with.
  public struct GoAwayEntry: Sendable {
    public let reason: GoAwayReason
    public let when: String
    public let action: ClientAction
    public let advice: String
  }

  /// One reason a row of `ImportUsers` can be refused with (the call itself succeeds).
  public struct ImportRowEntry: Sendable {
    public let reason: ImportRowReason
    public let when: String
    /// What the operator importing should do about the row.
    public let advice: String
  }

  /// The entry for the reason named `name`, if the server sends it.
  public static func entry(named name: String) -> Entry? {
    reasons.first { $0.reason.name == name }
  }

  public static let reasons: [Entry] = auth + admin + transport

  private static let auth: [Entry] = [
    Entry(
      reason: .apiKeyInvalid, group: .auth,
      when: "An AuthService call without `x-api-key` metadata, or with a key no project has.",
      action: .fixSetup,
      advice:
        "The app ships a wrong or revoked API key: an operator issues one (`anonauth admin create-api-key`)."),
    Entry(
      reason: .operationNotAllowed, group: .auth,
      when:
        "The sign-in method of the call (anonymous, email and password, an identity provider, the Firebase session exchange) is disabled for the project.",
      action: .fixSetup,
      advice: "Hide the method in the app, or have an operator enable it (`anonauth admin update-config`)."),
    Entry(
      reason: .tooManyAttempts, group: .auth,
      when:
        "A limit on work per address or per project was reached: the per-IP sign-up quota, fair admission of password checks, token signing and store writes, the failed-sign-in throttles, a full password-check or identity-provider queue, a password link of the same account already in progress, or a refresh token whose successor was just handed out.",
      action: .retryLater,
      advice:
        "Wait `details.retry_after_seconds` (1 to 3600) before the same call: one sent sooner is refused again. Tell the user if the wait is long."
    ),
    Entry(
      reason: .invalidIdToken, group: .auth,
      when:
        "The ID token does not verify: malformed, unknown key id, bad signature, another project's, without `sub`, `iat` or `exp`, or issued in the future.",
      action: .refreshToken,
      advice: "Get a new ID token with the refresh token; if that fails too, sign in again."),
    Entry(
      reason: .tokenExpired, group: .auth,
      when:
        "The ID token has expired, or the account's tokens were revoked (its `valid_since` is later than the token); also a refresh token revoked that way.",
      action: .refreshToken,
      advice:
        "Get a new ID token with the refresh token and retry; a refresh answered `TOKEN_EXPIRED` or `INVALID_REFRESH_TOKEN` means sign in again."
    ),
    Entry(
      reason: .invalidRefreshToken, group: .auth,
      when:
        "The refresh token is unknown or revoked, was replayed after it had been rotated (which revokes the whole session), or its account no longer exists.",
      action: .signInAgain,
      advice:
        "Drop the stored session and sign in again. Keep only the newest refresh token each refresh returns: an old one replayed after a short grace window ends the session."
    ),
    Entry(
      reason: .userNotFound, group: .auth,
      when:
        "The account of the token (or of an admin call's `local_id`) no longer exists: deleted by the user, an admin, or the clean-up of old anonymous accounts.",
      action: .signInAgain,
      advice: "Drop the stored session; sign in anew (an anonymous user gets a new, empty account)."),
    Entry(
      reason: .userDisabled, group: .auth,
      when: "The account has been disabled by an admin.",
      action: .showUser,
      advice: "Tell the user the account is disabled; retrying does not help until an admin enables it."),
    Entry(
      reason: .invalidEmail, group: .auth,
      when: "The email address is not a valid address.",
      action: .showUser,
      advice: "Ask the user for a valid address."),
    Entry(
      reason: .weakPassword, group: .auth,
      when: "The password is shorter than the project's minimum length, or longer than 4096 bytes.",
      action: .showUser,
      advice: "Ask for another password; the message names the minimum."),
    Entry(
      reason: .emailExists, group: .auth,
      when: "Signing up or linking with an email that another account of the project has.",
      action: .showUser,
      advice: "Offer to sign in with that email instead."),
    Entry(
      reason: .invalidLoginCredentials, group: .auth,
      when: "A password sign-in with an unknown email or a wrong password (one reason for both, on purpose).",
      action: .showUser,
      advice:
        "Say that the email or the password is wrong, without saying which. Repeated failures lead to `TOO_MANY_ATTEMPTS_TRY_LATER`."
    ),
    Entry(
      reason: .credentialAlreadyInUse, group: .auth,
      when:
        "Linking a provider identity that belongs to another account; `details.provider_id` and `details.email` say which.",
      action: .showUser,
      advice:
        "Offer to sign in with that credential instead (the current anonymous account's data then needs merging by the app)."
    ),
    Entry(
      reason: .providerAlreadyLinked, group: .auth,
      when: "Linking a provider (or a password) the account already has.",
      action: .fixRequest,
      advice: "Refresh the app's view of the account's providers; nothing needs linking."),
    Entry(
      reason: .invalidIdpResponse, group: .auth,
      when:
        "The identity provider's token does not verify (signature, audience, issuer, expiry), or the provider's keys could not be fetched.",
      action: .showUser,
      advice: "Ask the user to sign in with the provider again, then retry with the new token."),
    Entry(
      reason: .missingOrInvalidNonce, group: .auth,
      when:
        "The provider's ID token carries a `nonce` and the credential has no raw nonce, or one whose SHA-256 (in hex) is not the token's, or the nonce already signed in once (a replayed token).",
      action: .showUser,
      advice:
        "Make a fresh random raw nonce for each sign-in, give the provider its SHA-256 in hex and send the raw value with the new token."
    ),
    Entry(
      reason: .noSuchProvider, group: .auth,
      when: "Unlinking a provider the account does not have.",
      action: .fixRequest,
      advice: "Refresh the app's view of the account's providers."),
    Entry(
      reason: .credentialTooOld, group: .auth,
      when:
        "A sensitive change to a permanent account (linking a credential, unlinking a provider, deleting the account) without a sign-in in the last 5 minutes.",
      action: .signInAgain,
      advice: "Ask the user to sign in again (re-authenticate), then repeat the change."),
    Entry(
      reason: .lastSignInMethod, group: .auth,
      when: "Unlinking the only sign-in method a permanent account has left.",
      action: .showUser,
      advice: "Explain that another sign-in method must be linked first."),
    Entry(
      reason: .invalidOobCode, group: .auth,
      when:
        "An email action's code (`ResetPassword`, `ApplyActionCode`, `SignInWithEmailLink`) that is unknown, already used, replaced by a newer one, of another kind, or sent to an address the account no longer has; a sign-in link used with another email.",
      action: .showUser,
      advice: "Say the link is no longer valid and offer to send a new one."),
    Entry(
      reason: .expiredOobCode, group: .auth,
      when: "An email action's code past its lifetime (1 hour for a password reset).",
      action: .showUser,
      advice: "Say the link has expired and offer to send a new one."),
    Entry(
      reason: .emailNotFound, group: .auth,
      when:
        "`SendOobCode` for an address with no account, only when the project turned email enumeration protection off (`email_enumeration_protection_disabled`).",
      action: .showUser,
      advice: "Ask the user to check the address, or to sign up."),
    Entry(
      reason: .unauthorizedDomain, group: .auth,
      when: "`SendOobCode` with a `continue_url` whose host is not in the project's `authorized_domains`.",
      action: .fixSetup,
      advice: "An operator adds the app's domain to `authorized_domains` (`anonauth admin update-project`)."),
    Entry(
      reason: .invalidContinueUri, group: .auth,
      when:
        "`SendOobCode` with a `continue_url` that is not an absolute http(s) URL, or an `EMAIL_SIGNIN` without one or without `can_handle_code_in_app`.",
      action: .fixRequest,
      advice:
        "Send an absolute https URL on an authorized domain, and for sign-in links `can_handle_code_in_app`."),
    Entry(
      reason: .missingSignUpMethod, group: .auth,
      when: "`SignUp` with neither `anonymous` nor `email_password` set.",
      action: .fixRequest,
      advice: "Set one of the two."),
    Entry(
      reason: .forbiddenClaim, group: .auth,
      when:
        "Custom claims that are not a JSON object, use a reserved claim name, or are over 1000 bytes (admin calls and imports).",
      action: .fixRequest,
      advice: "Rename or shrink the claims."),
  ]

  private static let admin: [Entry] = [
    Entry(
      reason: .adminKeyInvalid, group: .admin,
      when: "An AdminService call without `authorization: Bearer <admin key>`, or with a wrong key.",
      action: .fixSetup,
      advice: "Use the daemon's admin key (`--admin-key-file`)."),
    Entry(
      reason: .clientCertificateRequired, group: .admin,
      when:
        "An AdminService call over a connection without a client certificate, on a daemon started with `--admin-requires-client-cert`.",
      action: .fixSetup,
      advice:
        "Connect with a client certificate signed by one of the daemon's client CAs (`--client-ca-file`)."),
    Entry(
      reason: .projectNotFound, group: .admin,
      when: "An admin call names a project that does not exist.",
      action: .fixRequest,
      advice: "Check the project id, or create the project (`anonauth admin create-project`)."),
    Entry(
      reason: .projectExists, group: .admin,
      when: "`CreateProject` with an id that exists.",
      action: .fixRequest,
      advice: "Pick another id, or use the existing project."),
    Entry(
      reason: .invalidConfig, group: .admin,
      when:
        "A project id or setting out of range, a missing `config`, an empty `update_mask`, or a field that is not settable.",
      action: .fixRequest,
      advice: "The message names the field and its range."),
    Entry(
      reason: .invalidArgument, group: .admin,
      when:
        "A request field out of range: a page size, a page token this server did not give, a list filter, too many ids, a backup name, a missing credential, a display name.",
      action: .fixRequest,
      advice: "The message names the field."),
    Entry(
      reason: .backupExists, group: .admin,
      when: "`Backup` to a name the backups directory already holds.",
      action: .fixRequest,
      advice: "Choose another name; backups are never overwritten."),
    Entry(
      reason: .uidExists, group: .admin,
      when: "`CreateAccount` with a `local_id` another account of the project has.",
      action: .fixRequest,
      advice: "Leave `local_id` empty to have one made, or pick another."),
    Entry(
      reason: .notClustered, group: .admin,
      when:
        "A cluster call (`DescribeCluster`, `RemoveClusterNode`) to a daemon whose store is the single file.",
      action: .fixRequest,
      advice: "Only a daemon started with `--cluster-id` has a cluster to describe."),
    Entry(
      reason: .nodeNotFound, group: .admin,
      when: "`RemoveClusterNode` for a node id the cluster does not have.",
      action: .fixRequest,
      advice: "Check the ids with `anonauth admin cluster`."),
    Entry(
      reason: .clusterRefused, group: .admin,
      when:
        "The replicated store's leader refused a membership change; the message has dqlite's code and text.",
      action: .fixSetup,
      advice: "Read the message; the cluster is unchanged."),
  ]

  private static let transport: [Entry] = [
    Entry(
      reason: .malformedRequest, group: .transport,
      when:
        "The call's payload does not parse as the method's request message, or a text field holds a NUL character.",
      action: .fixRequest,
      advice: "A bug in the client: check the generated message types against the protos."),
    Entry(
      reason: .unknownMethod, group: .transport,
      when: "The method path names no method of this server.",
      action: .fixRequest,
      advice: "Check the path (`/package.Service/Method`) and the server's version."),
    Entry(
      reason: .deadlineExceeded, group: .transport,
      when:
        "The call's deadline (`timeout_ms`, or `--call-timeout-ms` when it sets none) passed before its handler answered; the work may or may not have been done.",
      action: .retryLater,
      advice:
        "Retry with backoff and a deadline that fits the method (a password check takes longer than a token refresh). Calls that create something may have succeeded."
    ),
    Entry(
      reason: .tooManyCalls, group: .transport,
      when:
        "The connection has `--max-concurrent-calls` calls in flight, or the payloads in flight from its address are over their byte budget.",
      action: .retryLater,
      advice: "Wait for calls in flight to finish, then retry; keep fewer calls in flight per connection."),
    Entry(
      reason: .shuttingDown, group: .transport,
      when:
        "A call that arrives after the server began a graceful stop (it also sends `GoAway` `SHUTTING_DOWN`).",
      action: .reconnect,
      advice:
        "The call was not processed: resend it on a new connection (another node, or this one once restarted)."
    ),
    Entry(
      reason: .storeUnavailable, group: .transport,
      when:
        "The store cannot take a write now: the disk is full, the file is read-only or failing, the store is busy, or the replicated store has no leader in reach (an election).",
      action: .retryLater,
      advice:
        "Retry with backoff: nothing was changed (except a write cut off by a lost leader, which may have committed), and reads still work."
    ),
    Entry(
      reason: .internalError, group: .transport,
      when: "A failure the server did not expect (logged with the call's request id).",
      action: .retryLater,
      advice: "Retry once with backoff; if it persists, report it with the `x-request-id` of the reply."),
    Entry(
      reason: .cancelled, group: .transport,
      when:
        "Only the test-only `anonauth.test.TestService/Sleep` (a daemon started with `--test-hooks`), when its call is cancelled.",
      action: .fixSetup,
      advice: "A production daemon never sends it."),
  ]

  /// Every `GoAway` reason: after it the server answers the calls up to `last_call_id` and
  /// closes the connection.
  public static let goAwayReasons: [GoAwayEntry] = [
    GoAwayEntry(
      reason: .shuttingDown,
      when: "The daemon begins a graceful stop (SIGTERM or SIGINT); calls in flight are still answered.",
      action: .reconnect,
      advice: "Resend the calls above `last_call_id` on a new connection."),
    GoAwayEntry(
      reason: .idleTimeout,
      when: "No call was in flight and nothing arrived for `--idle-timeout-ms` (5 minutes by default).",
      action: .reconnect,
      advice: "Reconnect when the next call is due; send `Ping` to keep a connection open instead."),
    GoAwayEntry(
      reason: .frameTooLarge,
      when:
        "A frame's length prefix is over the limit: `--max-unauthenticated-frame-size` until an admin call succeeds on the connection, `--max-frame-size` after.",
      action: .fixRequest,
      advice: "Send smaller requests (import accounts in smaller batches), and send the admin call first."),
    GoAwayEntry(
      reason: .malformedFrame,
      when:
        "A zero length prefix, bytes that do not parse as a `Frame`, a frame with no kind or a kind a client may not send, or a call id already in flight.",
      action: .fixRequest,
      advice: "A bug in the client's framing."),
    GoAwayEntry(
      reason: .resourceExhausted,
      when:
        "The connection's next bytes would take the process over `--max-buffered-bytes` or its address over `--max-buffered-bytes-per-ip` of partly received data.",
      action: .reconnect,
      advice: "Reconnect after a backoff and send fewer or smaller calls at once."),
  ]

  /// Every reason `ImportUsers` reports a refused row with (`ImportRowError.reason`); the
  /// rows before and after it are imported.
  public static let importRowReasons: [ImportRowEntry] = [
    ImportRowEntry(
      reason: .invalidUID, when: "`local_id` is empty, over 128 bytes, or has control characters.",
      advice: "Fix the row's uid."),
    ImportRowEntry(
      reason: .invalidEmail, when: "`email` is not a valid address.", advice: "Fix or drop the row's email."),
    ImportRowEntry(
      reason: .invalidField,
      when:
        "A display name or photo URL over 2048 bytes or with control characters, a creation or last sign-in time before 0 or more than a day ahead, both `password_hash` and `anonauth_password_hash` set, or a row the store refused.",
      advice: "The message names the field."),
    ImportRowEntry(
      reason: .forbiddenClaim,
      when: "The row's custom claims are not a JSON object, use a reserved name, or are over 1000 bytes.",
      advice: "Rename or shrink the claims."),
    ImportRowEntry(
      reason: .invalidPasswordHash,
      when:
        "A password hash without an email, an `anonauth_password_hash` that is not a scrypt PHC string, or a hash or salt over 1024 bytes.",
      advice: "Export the row again with its hash, and send the hash parameters of the project it came from."),
    ImportRowEntry(
      reason: .missingHashConfig,
      when: "The row has `password_hash` but the request has no `hash_config`.",
      advice: "Send the project's password-hash parameters with the batch."),
    ImportRowEntry(
      reason: .invalidProvider,
      when:
        "A provider without a `provider_id` of `[A-Za-z0-9._-]` (at most 64) or a `raw_id` (at most 256 bytes), or the same provider twice.",
      advice: "Fix the row's providers."),
    ImportRowEntry(
      reason: .duplicateUID, when: "An earlier row of the same batch has this uid.",
      advice: "Keep one row per uid."),
    ImportRowEntry(
      reason: .duplicateEmail, when: "An earlier row of the same batch has this email.",
      advice: "Keep one account per email."),
    ImportRowEntry(
      reason: .uidExists,
      when: "An account with this uid exists and the request says `on_conflict: IMPORT_CONFLICT_FAIL`.",
      advice:
        "Leave it, or import with the default `IMPORT_CONFLICT_SKIP`, which counts such rows as skipped."),
    ImportRowEntry(
      reason: .emailExists, when: "Another account of the project has this email.",
      advice: "Merge the two accounts before importing, or drop one."),
    ImportRowEntry(
      reason: .credentialAlreadyInUse, when: "A provider identity of the row belongs to another account.",
      advice: "Merge the two accounts before importing, or drop the identity."),
  ]
}
