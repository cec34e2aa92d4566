/// One step of the schema: SQL that takes the store from `version - 1` (or any earlier
/// version) to `version`. Steps are never edited once shipped; a change is a new step.
public struct Migration: Sendable, Hashable {
  public let version: Int
  /// May hold several statements. It runs inside the migration's own transaction, so it
  /// must not BEGIN or COMMIT, and cannot change `PRAGMA foreign_keys`.
  public let sql: String

  public init(version: Int, sql: String) {
    self.version = version
    self.sql = sql
  }
}

/// Brings a store's schema up to the newest migration the build knows.
enum Migrator {
  /// Applies each migration newer than `PRAGMA user_version`, each in its own
  /// `BEGIN IMMEDIATE` transaction that also sets the version, so a crash leaves the store
  /// at a whole version and the next open resumes there.
  /// - Returns: the version the store is at afterwards.
  /// - Throws: `.schemaTooNew` for a file written by a newer build (running old code on it
  ///   could corrupt data it does not understand); `.migrationFailed` when a step fails.
  static func migrate(_ database: Database, to migrations: [Migration]) throws(StoreError) -> Int {
    try validate(migrations)
    let current = try database.userVersion()
    let newest = migrations.last?.version ?? 0
    if current > newest {
      throw StoreError(
        kind: .schemaTooNew,
        message: "the store is at schema version \(current), newer than this build knows "
          + "(\(newest)): run a newer build, or restore a backup made by this one")
    }
    for migration in migrations where migration.version > current {
      try apply(migration, to: database)
    }
    return max(current, newest)
  }

  private static func apply(_ migration: Migration, to database: Database) throws(StoreError) {
    do throws(StoreError) {
      try database.execute("BEGIN IMMEDIATE")
      // Another node of a cluster may have applied it since the version was read.
      if try database.userVersion() >= migration.version {
        try database.execute("COMMIT")
        return
      }
      try database.executeScript(migration.sql)
      // PRAGMA takes no bound arguments; the version is an Int, so this is not injectable.
      try database.execute("PRAGMA user_version = \(migration.version)")
      try database.execute("COMMIT")
    } catch {
      if database.isInTransaction { try? database.execute("ROLLBACK") }
      throw error.with(kind: .migrationFailed, messagePrefix: "migration \(migration.version) failed: ")
    }
  }

  private static func validate(_ migrations: [Migration]) throws(StoreError) {
    var previous = 0
    for migration in migrations {
      guard migration.version > previous else {
        throw StoreError(
          kind: .invalidArgument,
          message: "migration versions must be positive and strictly increasing: "
            + "\(migration.version) follows \(previous)")
      }
      previous = migration.version
    }
  }
}
