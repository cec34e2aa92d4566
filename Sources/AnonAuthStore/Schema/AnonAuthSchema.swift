/// The versioned schema of the AnonAuth store. A migration is never edited once it has
/// shipped: a change is a new migration with the next version, so an older store
/// upgrades on start.
public enum AnonAuthSchema {
  public static let migrations: [Migration] = [
    Migration(
      version: 1,
      sql: """
        CREATE TABLE projects (
          project_id TEXT PRIMARY KEY,
          anonymous_enabled INTEGER NOT NULL DEFAULT 0,
          email_password_enabled INTEGER NOT NULL DEFAULT 0,
          idps_json TEXT NOT NULL DEFAULT '[]',
          auto_cleanup_enabled INTEGER NOT NULL DEFAULT 0,
          auto_cleanup_enabled_at_ms INTEGER NOT NULL DEFAULT 0,
          sign_up_quota_per_hour INTEGER NOT NULL DEFAULT 0,
          id_token_ttl_seconds INTEGER NOT NULL DEFAULT 0,
          password_min_length INTEGER NOT NULL DEFAULT 0,
          created_at_ms INTEGER NOT NULL
        ) WITHOUT ROWID;

        -- API keys name a project; they are public identifiers, stored as they are.
        CREATE TABLE api_keys (
          api_key TEXT PRIMARY KEY,
          project_id TEXT NOT NULL REFERENCES projects(project_id) ON DELETE CASCADE,
          created_at_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX api_keys_by_project ON api_keys(project_id);

        -- Admin keys are secrets: only their SHA-256 is kept.
        CREATE TABLE admin_keys (
          key_hash BLOB PRIMARY KEY,
          label TEXT NOT NULL,
          created_at_ms INTEGER NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE accounts (
          project_id TEXT NOT NULL REFERENCES projects(project_id) ON DELETE CASCADE,
          local_id TEXT NOT NULL,
          is_anonymous INTEGER NOT NULL,
          email TEXT,
          email_verified INTEGER NOT NULL DEFAULT 0,
          display_name TEXT NOT NULL DEFAULT '',
          password_hash TEXT,
          disabled INTEGER NOT NULL DEFAULT 0,
          created_at_ms INTEGER NOT NULL,
          last_sign_in_at_ms INTEGER NOT NULL,
          last_refresh_at_ms INTEGER NOT NULL DEFAULT 0,
          valid_since INTEGER NOT NULL DEFAULT 0,
          custom_claims_json TEXT NOT NULL DEFAULT '',
          scheduled_deletion_at_ms INTEGER NOT NULL DEFAULT 0,
          PRIMARY KEY (project_id, local_id)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX accounts_by_email ON accounts(project_id, email) WHERE email IS NOT NULL;
        CREATE INDEX accounts_by_deletion ON accounts(scheduled_deletion_at_ms)
          WHERE scheduled_deletion_at_ms > 0;

        CREATE TABLE provider_identities (
          project_id TEXT NOT NULL,
          provider_id TEXT NOT NULL,
          raw_id TEXT NOT NULL,
          local_id TEXT NOT NULL,
          email TEXT NOT NULL DEFAULT '',
          display_name TEXT NOT NULL DEFAULT '',
          PRIMARY KEY (project_id, provider_id, raw_id),
          FOREIGN KEY (project_id, local_id) REFERENCES accounts(project_id, local_id) ON DELETE CASCADE
        ) WITHOUT ROWID;
        CREATE INDEX identities_by_account ON provider_identities(project_id, local_id);

        -- Refresh tokens: only the SHA-256 of the token. A rotated token keeps its
        -- successor sealed (AES-256-GCM under the master key) for the reuse grace window.
        CREATE TABLE refresh_tokens (
          token_hash BLOB PRIMARY KEY,
          project_id TEXT NOT NULL,
          local_id TEXT NOT NULL,
          family_id TEXT NOT NULL,
          issued_at_ms INTEGER NOT NULL,
          auth_time INTEGER NOT NULL,
          sign_in_provider TEXT NOT NULL,
          rotated_at_ms INTEGER NOT NULL DEFAULT 0,
          successor_sealed BLOB,
          revoked INTEGER NOT NULL DEFAULT 0,
          FOREIGN KEY (project_id, local_id) REFERENCES accounts(project_id, local_id) ON DELETE CASCADE
        ) WITHOUT ROWID;
        CREATE INDEX refresh_tokens_by_account ON refresh_tokens(project_id, local_id);
        CREATE INDEX refresh_tokens_by_family ON refresh_tokens(family_id);

        -- Signing keys are server-wide; private keys sealed under the master key.
        CREATE TABLE signing_keys (
          kid TEXT PRIMARY KEY,
          private_key_sealed BLOB NOT NULL,
          certificate_pem TEXT NOT NULL,
          created_at_ms INTEGER NOT NULL,
          retired_at_ms INTEGER NOT NULL DEFAULT 0,
          publish_until_ms INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;

        -- The per-IP sign-up quota's sliding window: one row per admitted sign-up.
        CREATE TABLE sign_up_events (
          project_id TEXT NOT NULL,
          ip_key TEXT NOT NULL,
          at_ms INTEGER NOT NULL
        );
        CREATE INDEX sign_up_events_window ON sign_up_events(project_id, ip_key, at_ms);
        CREATE INDEX sign_up_events_age ON sign_up_events(at_ms);

        CREATE TABLE scheduled_quotas (
          id INTEGER PRIMARY KEY,
          project_id TEXT NOT NULL REFERENCES projects(project_id) ON DELETE CASCADE,
          quota INTEGER NOT NULL,
          start_ms INTEGER NOT NULL,
          end_ms INTEGER NOT NULL
        );
        CREATE INDEX scheduled_quotas_by_project ON scheduled_quotas(project_id, end_ms);

        CREATE TABLE sign_ups_daily (
          project_id TEXT NOT NULL,
          day TEXT NOT NULL,
          provider TEXT NOT NULL,
          count INTEGER NOT NULL,
          PRIMARY KEY (project_id, day, provider)
        ) WITHOUT ROWID;

        CREATE TABLE cleanup_stats (
          project_id TEXT PRIMARY KEY,
          cleaned_up_total INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        """),
    Migration(
      version: 2,
      sql: """
        -- Filtered account counts (ListAccounts total, GetUsage) read this index alone.
        CREATE INDEX accounts_by_kind ON accounts(project_id, is_anonymous);
        """),
    Migration(
      version: 3,
      sql: """
        -- Rotated refresh tokens, for clean-up: their sealed successors are dropped after
        -- the reuse grace window, the rows themselves after the retention period.
        CREATE INDEX refresh_tokens_rotated ON refresh_tokens(rotated_at_ms) WHERE rotated_at_ms > 0;
        """),
    Migration(
      version: 4,
      sql: """
        -- Moving from Firebase: the session exchange's settings, photo URLs (Firebase
        -- keeps them), and the hash parameters imported password hashes were made with.
        ALTER TABLE projects ADD COLUMN firebase_project_id TEXT NOT NULL DEFAULT '';
        ALTER TABLE projects ADD COLUMN firebase_certs_json TEXT NOT NULL DEFAULT '';
        ALTER TABLE projects ADD COLUMN firebase_certs_url TEXT NOT NULL DEFAULT '';
        ALTER TABLE projects ADD COLUMN firebase_create_unknown_users INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE accounts ADD COLUMN photo_url TEXT NOT NULL DEFAULT '';
        ALTER TABLE provider_identities ADD COLUMN photo_url TEXT NOT NULL DEFAULT '';
        -- One row per distinct hash config an import used; the parameters (the signer key
        -- is a secret) sealed under the master key. Imported hashes name their row.
        CREATE TABLE password_hash_configs (
          project_id TEXT NOT NULL REFERENCES projects(project_id) ON DELETE CASCADE,
          config_id TEXT NOT NULL,
          sealed BLOB NOT NULL,
          created_at_ms INTEGER NOT NULL,
          PRIMARY KEY (project_id, config_id)
        ) WITHOUT ROWID;
        """),
    Migration(
      version: 5,
      sql: """
        -- Accounts per project and kind, kept by triggers: ListAccounts' total and GetUsage
        -- read a row instead of counting an index (seconds at millions of accounts). Rows
        -- of a project go with it; an account deleted by that cascade then updates nothing.
        CREATE TABLE account_counts (
          project_id TEXT NOT NULL REFERENCES projects(project_id) ON DELETE CASCADE,
          is_anonymous INTEGER NOT NULL,
          count INTEGER NOT NULL,
          PRIMARY KEY (project_id, is_anonymous)
        ) WITHOUT ROWID;
        INSERT INTO account_counts (project_id, is_anonymous, count)
          SELECT project_id, is_anonymous, count(*) FROM accounts GROUP BY project_id, is_anonymous;
        CREATE TRIGGER account_counts_insert AFTER INSERT ON accounts BEGIN
          INSERT INTO account_counts (project_id, is_anonymous, count)
            VALUES (NEW.project_id, NEW.is_anonymous, 1)
            ON CONFLICT (project_id, is_anonymous) DO UPDATE SET count = count + 1;
        END;
        CREATE TRIGGER account_counts_delete AFTER DELETE ON accounts BEGIN
          UPDATE account_counts SET count = count - 1
            WHERE project_id = OLD.project_id AND is_anonymous = OLD.is_anonymous;
        END;
        CREATE TRIGGER account_counts_kind AFTER UPDATE OF is_anonymous ON accounts
          WHEN OLD.is_anonymous IS NOT NEW.is_anonymous
        BEGIN
          UPDATE account_counts SET count = count - 1
            WHERE project_id = OLD.project_id AND is_anonymous = OLD.is_anonymous;
          INSERT INTO account_counts (project_id, is_anonymous, count)
            VALUES (NEW.project_id, NEW.is_anonymous, 1)
            ON CONFLICT (project_id, is_anonymous) DO UPDATE SET count = count + 1;
        END;
        """),
    Migration(
      version: 6,
      sql: """
        -- Anonymous sign-ups no longer write an index of their own. accounts_by_kind put
        -- every new account at a random place in a second B-tree (the uid is random), one
        -- more dirty page per sign-up in each commit's WAL frames; since account_counts,
        -- only ListAccounts' kind filter read it. Listing permanent accounts (few, among
        -- many anonymous ones) keeps an index; anonymous ones are most accounts, and a
        -- page of them reads the primary key in uid order.
        DROP INDEX accounts_by_kind;
        CREATE INDEX accounts_permanent ON accounts(project_id, local_id) WHERE is_anonymous = 0;
        """),
    Migration(
      version: 7,
      sql: """
        -- Every sign-up and every refresh wrote an entry into refresh_tokens_by_family,
        -- whose keys (a family id starts with the family's start) put a refresh's entry
        -- at a random place; it was read only when a replayed token revokes its family.
        -- A family never leaves its account, so the account's index, keyed by the
        -- family too, finds exactly the family's tokens: one B-tree fewer to write per
        -- sign-up and per refresh. (Keyed by the account alone, a revocation would read
        -- every token the account ever had: rotated tokens of live families are kept.)
        DROP INDEX refresh_tokens_by_family;
        DROP INDEX refresh_tokens_by_account;
        CREATE INDEX refresh_tokens_by_account_family ON refresh_tokens(project_id, local_id, family_id);
        """),
    Migration(
      version: 8,
      sql: """
        -- One row per session (token family) instead of one per token: a refresh rewrites
        -- its family's row, so a session costs the same however often it refreshes (every
        -- refresh used to leave a row that lived as long as the account). The row keeps
        -- the live token's SHA-256 and the previous one's, with the rotation time and the
        -- successor sealed for the reuse grace window; a token that is neither is an older
        -- generation, and presenting it revokes the family, which deletes the row. Tokens
        -- carry their family id (16 bytes: the start time in ms, then random), so a
        -- refresh looks up its row by primary key.
        --
        -- Each live token of the old table becomes a session whose id is its key's first
        -- 16 bytes; legacy_key finds it by the old key until its first refresh (partial
        -- index: sessions started after the upgrade never write it). Rotated tokens are
        -- not carried over; an account keeps its newest 100 sessions (the cap the service
        -- keeps from now on, RefreshTokensRepository.maxSessionsPerAccount). Inserted in
        -- key order, which takes a third less CPU than the order of the window's sort.
        CREATE TABLE refresh_sessions (
          family_id BLOB PRIMARY KEY,
          project_id TEXT NOT NULL,
          local_id TEXT NOT NULL,
          token_hash BLOB NOT NULL,
          generation INTEGER NOT NULL DEFAULT 0,
          issued_at_ms INTEGER NOT NULL,
          auth_time INTEGER NOT NULL,
          sign_in_provider TEXT NOT NULL,
          previous_hash BLOB,
          rotated_at_ms INTEGER NOT NULL DEFAULT 0,
          successor_sealed BLOB,
          reissues INTEGER NOT NULL DEFAULT 0,
          legacy_key BLOB,
          FOREIGN KEY (project_id, local_id) REFERENCES accounts(project_id, local_id) ON DELETE CASCADE
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO refresh_sessions (family_id, project_id, local_id, token_hash, issued_at_ms,
            auth_time, sign_in_provider, legacy_key)
          SELECT substr(token_hash, 1, 16), project_id, local_id, token_hash, issued_at_ms, auth_time,
            sign_in_provider, token_hash
          FROM (SELECT *, row_number() OVER (
                  PARTITION BY project_id, local_id ORDER BY issued_at_ms DESC, token_hash DESC) AS newest
                FROM refresh_tokens WHERE rotated_at_ms = 0 AND revoked = 0)
          WHERE newest <= 100
          ORDER BY 1;
        DROP TABLE refresh_tokens;
        CREATE INDEX refresh_sessions_by_account ON refresh_sessions(project_id, local_id);
        CREATE INDEX refresh_sessions_sealed ON refresh_sessions(rotated_at_ms) WHERE successor_sealed IS NOT NULL;
        CREATE INDEX refresh_sessions_legacy ON refresh_sessions(legacy_key) WHERE legacy_key IS NOT NULL;
        """),
    Migration(
      version: 9,
      sql: """
        -- The origins whose browser apps may call the HTTPS JSON API, one per line; empty:
        -- none.
        ALTER TABLE projects ADD COLUMN cors_origins TEXT NOT NULL DEFAULT '';
        """),
    Migration(
      version: 10,
      sql: """
        -- When a key starts signing: a rotated-in key is published first and signs only
        -- once every verifier's cached key set holds it (TokenMinter.publishAheadSeconds);
        -- 0 (every key made before): from its creation.
        ALTER TABLE signing_keys ADD COLUMN signs_from_ms INTEGER NOT NULL DEFAULT 0;
        """),
    Migration(
      version: 11,
      sql: """
        -- The sign-up quota's window as counters: one row per project, IP key and minute
        -- instead of one per sign-up, so admitting a sign-up reads at most the hour's
        -- minutes however many sign-ups the window holds (counting the events took time
        -- in proportion to them, inside the one writer's transaction). A row keeps its
        -- minute's count, its oldest and newest sign-up, and how many were at the oldest:
        -- while the hour's boundary runs through the minute, those are taken to have left
        -- and the rest to count (QuotaRepository.Bucket). Minutes by integer division
        -- (times are after 1970). The events of the window carry over; the table of
        -- events goes.
        CREATE TABLE sign_up_buckets (
          project_id TEXT NOT NULL,
          ip_key TEXT NOT NULL,
          minute INTEGER NOT NULL,
          count INTEGER NOT NULL,
          oldest_ms INTEGER NOT NULL,
          at_oldest INTEGER NOT NULL,
          newest_ms INTEGER NOT NULL,
          PRIMARY KEY (project_id, ip_key, minute)
        ) WITHOUT ROWID;
        CREATE INDEX sign_up_buckets_age ON sign_up_buckets(minute);
        INSERT INTO sign_up_buckets (project_id, ip_key, minute, count, oldest_ms, at_oldest, newest_ms)
          SELECT project_id, ip_key, at_ms / 60000, count(*), min(at_ms), 0, max(at_ms)
          FROM sign_up_events GROUP BY project_id, ip_key, at_ms / 60000;
        UPDATE sign_up_buckets SET at_oldest = (SELECT count(*) FROM sign_up_events AS e
          WHERE e.project_id = sign_up_buckets.project_id AND e.ip_key = sign_up_buckets.ip_key
            AND e.at_ms = sign_up_buckets.oldest_ms);
        DROP TABLE sign_up_events;
        """),
    Migration(
      version: 12,
      sql: """
        -- The nonces of provider ID tokens that signed in, so that a token is used once:
        -- nonce_hash is SHA-256 of the provider id, a zero byte and the token's nonce claim;
        -- a row lives until its token expires (a day at most) and the clean-up pass drops it.
        CREATE TABLE used_nonces (
          project_id TEXT NOT NULL,
          nonce_hash BLOB NOT NULL,
          expires_at_ms INTEGER NOT NULL,
          PRIMARY KEY (project_id, nonce_hash)
        ) WITHOUT ROWID;
        CREATE INDEX used_nonces_expiry ON used_nonces(expires_at_ms);
        """),
    Migration(
      version: 13,
      sql: """
        -- Email actions (password reset, verification, email change, sign-in links). A
        -- code is kept as its SHA-256 only, bound to its project, account (empty for a
        -- sign-in link to an address with no account yet), kind and email; using it
        -- deletes its row, and a newer code of the same kind for the same account and
        -- email deletes the older ones.
        CREATE TABLE oob_codes (
          code_hash BLOB PRIMARY KEY,
          project_id TEXT NOT NULL,
          local_id TEXT NOT NULL,
          kind TEXT NOT NULL,
          email TEXT NOT NULL,
          new_email TEXT NOT NULL DEFAULT '',
          created_at_ms INTEGER NOT NULL,
          expires_at_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX oob_codes_by_account ON oob_codes(project_id, local_id, kind);
        CREATE INDEX oob_codes_by_expiry ON oob_codes(expires_at_ms);
        -- Mails accepted and not yet delivered: the mail worker sends each, retrying
        -- with backoff, and deletes it once sent or given up.
        CREATE TABLE mail_outbox (
          id INTEGER PRIMARY KEY,
          project_id TEXT NOT NULL,
          recipient TEXT NOT NULL,
          sender TEXT NOT NULL,
          subject TEXT NOT NULL,
          text_body TEXT NOT NULL,
          html_body TEXT NOT NULL,
          request_type TEXT NOT NULL,
          link TEXT NOT NULL,
          created_at_ms INTEGER NOT NULL,
          next_attempt_at_ms INTEGER NOT NULL,
          attempts INTEGER NOT NULL DEFAULT 0,
          last_error TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at_ms);
        -- The hosts a continue URL may name (one per line), and the project's mail settings.
        ALTER TABLE projects ADD COLUMN authorized_domains TEXT NOT NULL DEFAULT 'localhost';
        ALTER TABLE projects ADD COLUMN email_enumeration_protection_disabled INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE projects ADD COLUMN email_sender TEXT NOT NULL DEFAULT '';
        ALTER TABLE projects ADD COLUMN email_app_name TEXT NOT NULL DEFAULT '';
        -- The project's own mail texts (EmailTemplate messages as JSON); '[]': built-in.
        ALTER TABLE projects ADD COLUMN email_templates_json TEXT NOT NULL DEFAULT '[]';
        """),
    Migration(
      version: 14,
      sql: """
        -- The outbox's size, kept by triggers: queueing a mail checks the outbox's bound
        -- (EmailSettings.outboxCapacity) by reading one row instead of counting up to
        -- 10,000 rows inside the writer's transaction, which every write shares.
        CREATE TABLE mail_outbox_size (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          count INTEGER NOT NULL
        );
        INSERT INTO mail_outbox_size (id, count) SELECT 1, count(*) FROM mail_outbox;
        CREATE TRIGGER mail_outbox_size_insert AFTER INSERT ON mail_outbox BEGIN
          UPDATE mail_outbox_size SET count = count + 1 WHERE id = 1;
        END;
        CREATE TRIGGER mail_outbox_size_delete AFTER DELETE ON mail_outbox BEGIN
          UPDATE mail_outbox_size SET count = count - 1 WHERE id = 1;
        END;
        """),
  ]
}
