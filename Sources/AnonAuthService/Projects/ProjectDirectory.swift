import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Synchronization

/// Projects, API keys and admin-key hashes, held in memory because every call needs them
/// and they change rarely; every change goes to the store first, then here.
public final class ProjectDirectory: Sendable {
  private struct State: Sendable {
    var projects: [String: ProjectRecord] = [:]
    /// The `commitOrder` of the write (or reload) each cached project came from.
    var projectOrder: [String: UInt64] = [:]
    var apiKeys: [String: String] = [:]
    /// The `commitOrder` of the job that read `apiKeys`.
    var apiKeysOrder: UInt64 = 0
    var adminKeyHashes: [[UInt8]] = []
    /// The `commitOrder` of the job that read `adminKeyHashes`.
    var adminKeysOrder: UInt64 = 0
    /// Admin keys this process made for itself (`makeProcessAdminKey`): never stored,
    /// so a reload of the stored hashes keeps them and a restart forgets them.
    var processKeyHashes: [[UInt8]] = []

    mutating func cacheAPIKeys(_ keys: [String: String], order: UInt64) {
      guard order > apiKeysOrder else { return }
      apiKeys = keys
      apiKeysOrder = order
    }

    mutating func cacheAdminKeys(_ hashes: [[UInt8]], order: UInt64) {
      guard order > adminKeysOrder else { return }
      adminKeyHashes = hashes
      adminKeysOrder = order
    }
  }

  private let store: Store
  private let clock: any ServiceClock
  private let state = Mutex(State())
  /// Numbers the directory's write jobs (and reloads, which read inside one), which the
  /// store runs one at a time: a larger number saw every smaller one's write. Callers
  /// resume in any order after their jobs, so each part of the cache keeps only what
  /// the newest number read or wrote.
  private let commitOrder = Atomic<UInt64>(0)

  public init(store: Store, clock: any ServiceClock) async throws {
    self.store = store
    self.clock = clock
    try await reload()
  }

  /// Reads everything again from the store (at start, and when another node of the
  /// cluster changed projects or keys). It reads inside a write job to take a number in
  /// commit order: what this node wrote and cached after that number stays, what it
  /// wrote before and has not cached yet is in the snapshot and will not replace it.
  public func reload() async throws {
    let (loaded, order) = try await store.write { db in
      var s = State()
      for p in try ProjectsRepository.all(db) { s.projects[p.projectID] = p }
      s.apiKeys = try Self.apiKeyMap(db)
      s.adminKeyHashes = try ProjectsRepository.adminKeyHashes(db)
      return (s, self.nextCommitOrder())
    }
    state.withLock { s in
      for id in Set(s.projects.keys).union(loaded.projects.keys)
      where s.projectOrder[id, default: 0] < order {
        s.projects[id] = loaded.projects[id]
        // Kept for a project gone from the store too: a write of it numbered before this
        // reload must not bring it back when its caller resumes.
        s.projectOrder[id] = order
      }
      s.cacheAPIKeys(loaded.apiKeys, order: order)
      s.cacheAdminKeys(loaded.adminKeyHashes, order: order)
    }
  }

  public func project(_ projectID: String) -> ProjectRecord? {
    state.withLock { $0.projects[projectID] }
  }

  /// The project an API key names.
  /// - Throws: `API_KEY_INVALID` for a missing or unknown key.
  public func project(apiKey: String?) throws(RPCError) -> ProjectRecord {
    guard let apiKey, !apiKey.isEmpty else {
      throw RPCError(.apiKeyInvalid, "the x-api-key metadata is missing")
    }
    guard let project = state.withLock({ s in s.apiKeys[apiKey].flatMap { s.projects[$0] } }) else {
      throw RPCError(.apiKeyInvalid, "the API key is not valid")
    }
    return project
  }

  /// Whether `rawKey` is an admin key: its SHA-256 compared in constant time against
  /// every stored hash.
  public func isAdminKey(_ rawKey: String) -> Bool {
    let hash = SHA256.hash(Array(rawKey.utf8))
    let hashes = state.withLock { $0.adminKeyHashes + $0.processKeyHashes }
    var found = false
    for stored in hashes where ConstantTime.equals(stored, hash) { found = true }
    return found
  }

  /// A new admin key that lives in this process's memory only: what the emulator
  /// listener puts in place of the Admin SDK's `Bearer owner`, so that its calls pass the
  /// same admin-key check as any other. 32 random bytes nobody outside the process sees.
  public func makeProcessAdminKey() throws(RPCError) -> String {
    let key: String
    do {
      key = Base64URL.encode(try SecureRandom.bytes(32))
    } catch {
      throw RPCError(.internalError, "random generator failed")
    }
    let hash = SHA256.hash(Array(key.utf8))
    state.withLock { $0.processKeyHashes.append(hash) }
    return key
  }

  // MARK: Changes

  /// Creates a project with every sign-in method off.
  public func createProject(_ projectID: String) async throws -> ProjectRecord {
    let record = ProjectRecord(projectID: projectID, createdAtMs: clock.nowMs())
    let order = try await store.write { db in
      try ProjectsRepository.insert(db, record)
      return self.nextCommitOrder()
    }
    cache(record, order: order)
    return record
  }

  /// Stores a changed project.
  public func save(_ record: ProjectRecord) async throws {
    let order = try await store.write { db in
      try ProjectsRepository.update(db, record)
      return self.nextCommitOrder()
    }
    cache(record, order: order)
  }

  /// Reads, changes and writes a project in one write job, so two concurrent changes of
  /// different settings cannot undo each other (the cache alone could be stale).
  /// - Returns: the project before and after; nil when it does not exist.
  public func update(
    _ projectID: String, _ change: @escaping @Sendable (ProjectRecord) throws -> ProjectRecord
  ) async throws -> (before: ProjectRecord, after: ProjectRecord)? {
    let result = try await store.write { db -> (ProjectRecord, ProjectRecord, UInt64)? in
      guard let current = try ProjectsRepository.get(db, projectID) else { return nil }
      let next = try change(current)
      try ProjectsRepository.update(db, next)
      return (current, next, self.nextCommitOrder())
    }
    guard let (before, after, order) = result else { return nil }
    cache(after, order: order)
    return (before, after)
  }

  /// Called inside a write job only (see `commitOrder`).
  private func nextCommitOrder() -> UInt64 {
    commitOrder.add(1, ordering: .relaxed).newValue
  }

  /// Keeps `record` unless a later write of the same project is already cached.
  private func cache(_ record: ProjectRecord, order: UInt64) {
    state.withLock { s in
      guard order > s.projectOrder[record.projectID, default: 0] else { return }
      s.projectOrder[record.projectID] = order
      s.projects[record.projectID] = record
    }
  }

  /// Makes an API key for a project: a public identifier, "AA" + 37 random characters
  /// (the length of a Firebase Web API key).
  public func createAPIKey(projectID: String) async throws -> String {
    let key = "AA" + (try SecureRandom.alphanumeric(37))
    let now = clock.nowMs()
    try await writeAPIKeys { db in
      try ProjectsRepository.insertAPIKey(db, projectID: projectID, apiKey: key, nowMs: now)
    }
    return key
  }

  public func revokeAPIKey(projectID: String, apiKey: String) async throws -> Bool {
    try await writeAPIKeys { db in
      try ProjectsRepository.deleteAPIKey(db, projectID: projectID, apiKey: apiKey)
    }
  }

  public func apiKeys(projectID: String) -> [String] {
    state.withLock { s in s.apiKeys.filter { $0.value == projectID }.map(\.key).sorted() }
  }

  /// Makes `rawKey`, a key the operator chose, the one admin key with `label` (its hash is
  /// stored; a key that had this label before stops working). Returns whether anything
  /// changed.
  @discardableResult
  public func replaceAdminKey(label: String, rawKey: String) async throws -> Bool {
    let hash = SHA256.hash(Array(rawKey.utf8))
    let now = clock.nowMs()
    return try await writeAdminKeys { db in
      try ProjectsRepository.replaceAdminKey(db, label: label, keyHash: hash, nowMs: now)
    }
  }

  /// Makes an admin key; only its hash is stored. The raw key is returned once.
  public func createAdminKey(label: String) async throws -> String {
    let key = "aak_" + (try SecureRandom.base64URL(byteCount: 32))
    let hash = SHA256.hash(Array(key.utf8))
    let now = clock.nowMs()
    try await writeAdminKeys { db in
      try ProjectsRepository.insertAdminKey(db, keyHash: hash, label: label, nowMs: now)
    }
    return key
  }

  /// Runs `change` in a write job that then reads every API key, and caches that map at
  /// the job's place in the commit order.
  private func writeAPIKeys<T: Sendable>(_ change: @escaping @Sendable (Database) throws -> T) async throws
    -> T
  {
    try await write(change, reread: Self.apiKeyMap) { $0.cacheAPIKeys($1, order: $2) }
  }

  /// The same for the admin keys' hashes.
  private func writeAdminKeys<T: Sendable>(_ change: @escaping @Sendable (Database) throws -> T) async throws
    -> T
  {
    try await write(change, reread: ProjectsRepository.adminKeyHashes) { $0.cacheAdminKeys($1, order: $2) }
  }

  /// `change`, then `reread` of what the directory caches, in one write job; `cache` keeps
  /// what was read with the job's place in the commit order.
  private func write<T: Sendable, Read: Sendable>(
    _ change: @escaping @Sendable (Database) throws -> T,
    reread: @escaping @Sendable (Database) throws -> Read,
    cache: (inout State, Read, UInt64) -> Void
  ) async throws -> T {
    let (result, read, order) = try await store.write { db in
      (try change(db), try reread(db), self.nextCommitOrder())
    }
    state.withLock { cache(&$0, read, order) }
    return result
  }

  /// Every API key and its project. The directory reads the whole map (a handful of keys
  /// per project) in each job that changes one, so the map cached is always one that
  /// was true at a known point of the commit order.
  private static func apiKeyMap(_ db: Database) throws -> [String: String] {
    var keys: [String: String] = [:]
    for k in try ProjectsRepository.allAPIKeys(db) { keys[k.apiKey] = k.projectID }
    return keys
  }
}
