extension Store {
  /// `PRAGMA quick_check` on a reader connection, for a store opened without the check
  /// (`checkIntegrityAtOpen: false`), so that a large store starts in milliseconds and is
  /// checked while it serves. Damage found makes the store refuse every later write
  /// (`.corrupt`) and report itself not writable: reads of undamaged pages go on, and
  /// nothing is written on top of a damaged file until an operator restores a backup.
  /// - Throws: `StoreError` `.corrupt` with SQLite's first findings.
  public func verifyIntegrity() async throws(StoreError) {
    do {
      try await read { database in try database.quickCheck() }
    } catch let error as StoreError where error.kind == .corrupt {
      counters.failedIntegrity.store(true, ordering: .relaxed)
      throw error
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(kind: .sqlite, message: "integrity check: \(error)")
    }
  }

  /// What a write gets once the integrity check failed.
  static let refusedAfterFailedCheck = StoreError(
    kind: .corrupt, message: "the store failed its integrity check: writes are refused until it is restored")
}
