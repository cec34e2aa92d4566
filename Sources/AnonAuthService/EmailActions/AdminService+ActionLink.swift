import AnonAuthStore
import AnonAuthWire

extension AdminService {
  // MARK: GenerateActionLink (addition)

  /// An email action's link for an administrator, answered instead of mailed (Firebase's
  /// `returnOobLink`): the account is named by `email` for every kind. The link carries
  /// the project's oldest API key, which the page handling it calls the API with.
  public func generateActionLink(_ request: GenerateActionLinkRequest, context: CallContext)
    async throws(RPCError) -> SendOobCodeResponse
  {
    let project = try existing(request.projectId, context)
    let send = request.request ?? SendOobCodeRequest()
    let kind = try EmailActionSender.kind(send)
    try EmailActionSender.checkSettings(send, kind: kind, project: project)
    let email = try EmailAddress.require(send.email)
    let projectID = project.projectID
    let (account, apiKey) = try await env.read { db in
      (
        try AccountsRepository.byEmail(db, projectID: projectID, email: email),
        try ProjectsRepository.apiKeys(db, projectID: projectID).first ?? ""
      )
    }
    if account == nil, kind != .emailSignIn {
      throw RPCError(.emailNotFound, "no account has this email")
    }
    var target = EmailActionSender.Target(account: account, email: email)
    if kind == .verifyAndChangeEmail {
      let newEmail = try EmailAddress.require(send.newEmail)
      target.newEmail = newEmail
      let taken = try await env.read { db in
        try AccountsRepository.byEmail(db, projectID: projectID, email: newEmail)
      }
      if let taken, taken.localID != account?.localID {
        throw RPCError(.emailExists, "another account has this email")
      }
    }
    return try await EmailActionSender(env: env).send(
      send, kind: kind, target: target, project: project, apiKey: apiKey, returnLink: true, log: context.log,
      Self.admitted)
  }
}
