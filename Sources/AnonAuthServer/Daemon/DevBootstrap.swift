import AnonAuthService

/// `--dev` on first start: the `demo-project` with anonymous and email/password sign-in
/// on, an API key and an admin key. The raw admin key goes only to `client.json` (stdout
/// says where that file is, never the key); the store keeps its hash.
enum DevBootstrap {
  static let projectID = "demo-project"

  /// - Parameter existing: the keys `client.json` already has (kept as they are).
  /// - Returns: the keys to add to `client.json`; empty when it has them all.
  static func ensure(directory: ProjectDirectory, existing: [String: String]) async throws -> [String: String]
  {
    var added: [String: String] = [:]
    var project = directory.project(projectID)
    if project == nil {
      var made = try await directory.createProject(projectID)
      made.anonymousEnabled = true
      made.emailPasswordEnabled = true
      try await directory.save(made)
      project = made
    }
    if existing["project_id"] == nil { added["project_id"] = projectID }
    let keyStillValid = existing["api_key"].map { (try? directory.project(apiKey: $0)) != nil } ?? false
    if !keyStillValid {
      let keys = directory.apiKeys(projectID: projectID)
      added["api_key"] = try await keys.first.asyncOr {
        try await directory.createAPIKey(projectID: projectID)
      }
    }
    if existing["admin_key"].map(directory.isAdminKey) != true {
      added["admin_key"] = try await directory.createAdminKey(label: "dev")
    }
    return added
  }
}

extension Optional where Wrapped: Sendable {
  fileprivate func asyncOr(_ make: () async throws -> Wrapped) async throws -> Wrapped {
    if let value = self { return value }
    return try await make()
  }
}
