import AnonAuthService
import AnonAuthWire

/// The project a service-level harness sets up through `AdminService`, as an operator
/// would: created, the settings the harness needs applied, and an API key made. Each
/// harness names its own settings (sign-in methods, providers, quotas); the steps are
/// the same.
public enum TestProject {
  /// Creates `projectID`, applies the fields of `config` named in `mask` (its project
  /// id is filled in here) and returns a new API key of the project.
  /// - Parameter context: the admin call context of each step, by method name.
  public static func create(
    _ projectID: String, admin: AdminService, context: (String) -> CallContext, config: ProjectConfig,
    mask: [String]
  ) async throws(RPCError) -> String {
    _ = try await admin.createProject(
      CreateProjectRequest(projectId: projectID), context: context("CreateProject"))
    var config = config
    config.projectId = projectID
    _ = try await admin.updateProjectConfig(
      UpdateProjectConfigRequest(config: config, updateMask: mask), context: context("UpdateProjectConfig"))
    return try await admin.createApiKey(
      CreateApiKeyRequest(projectId: projectID), context: context("CreateApiKey")
    ).apiKey
  }
}
