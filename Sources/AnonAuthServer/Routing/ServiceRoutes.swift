import AnonAuthService
import AnonAuthWire

/// Puts every implemented method of the four services into the router, each with its
/// service's credential check.
public enum ServiceRoutes {
  public static func register(
    in router: inout Router, environment env: ServiceEnvironment, health: HealthService,
    cleanup: CleanupWorker,
    backupDirectory: String, cluster: ClusterNode? = nil
  ) {
    router.unary(HealthService.name, "Check") { (request: CheckRequest, context) in
      health.check(request, context: context)
    }

    let accounts = AccountService(environment: env)
    let apiKey: Router.Authenticator = { context throws(RPCError) in try accounts.authenticate(context) }
    router.unary(AccountService.name, "SignUp", authenticate: apiKey, accounts.signUp)
    router.unary(AccountService.name, "SignInWithPassword", authenticate: apiKey, accounts.signInWithPassword)
    router.unary(AccountService.name, "SignInWithIdp", authenticate: apiKey, accounts.signInWithIdp)
    router.unary(
      AccountService.name, "SignInWithFirebaseIdToken", authenticate: apiKey,
      accounts.signInWithFirebaseIdToken)
    router.unary(AccountService.name, "LinkWithCredential", authenticate: apiKey, accounts.linkWithCredential)
    router.unary(AccountService.name, "UnlinkProvider", authenticate: apiKey, accounts.unlinkProvider)
    router.unary(AccountService.name, "RefreshToken", authenticate: apiKey, accounts.refreshToken)
    router.unary(AccountService.name, "GetAccountInfo", authenticate: apiKey, accounts.getAccountInfo)
    router.unary(AccountService.name, "DeleteAccount", authenticate: apiKey, accounts.deleteAccount)

    let tokens = TokenService(environment: env)
    router.unary(TokenService.name, "VerifyIdToken", authenticate: apiKey, tokens.verifyIdToken)
    router.unary(TokenService.name, "GetPublicKeys", authenticate: apiKey) {
      (request: GetPublicKeysRequest, context) in tokens.getPublicKeys(request, context: context)
    }

    let admin = AdminService(environment: env, cleanup: cleanup, backupDirectory: backupDirectory)
    let adminKey: Router.Authenticator = { context throws(RPCError) in try admin.authenticate(context) }
    router.unary(AdminService.name, "CreateProject", authenticate: adminKey, admin.createProject)
    router.unary(AdminService.name, "GetProjectConfig", authenticate: adminKey) {
      (request: GetProjectConfigRequest, context) throws(RPCError) in
      try admin.getProjectConfig(request, context: context)
    }
    router.unary(AdminService.name, "UpdateProjectConfig", authenticate: adminKey, admin.updateProjectConfig)
    router.unary(AdminService.name, "CreateApiKey", authenticate: adminKey, admin.createApiKey)
    router.unary(AdminService.name, "ListApiKeys", authenticate: adminKey) {
      (request: ListApiKeysRequest, context) throws(RPCError) in
      try admin.listApiKeys(request, context: context)
    }
    router.unary(AdminService.name, "RevokeApiKey", authenticate: adminKey, admin.revokeApiKey)
    router.unary(AdminService.name, "ScheduleSignUpQuota", authenticate: adminKey, admin.scheduleSignUpQuota)
    router.unary(AdminService.name, "RotateSigningKey", authenticate: adminKey, admin.rotateSigningKey)
    router.unary(AdminService.name, "ListAccounts", authenticate: adminKey, admin.listAccounts)
    router.unary(AdminService.name, "GetAccount", authenticate: adminKey, admin.getAccount)
    router.unary(AdminService.name, "DisableAccount", authenticate: adminKey, admin.disableAccount)
    router.unary(AdminService.name, "DeleteAccounts", authenticate: adminKey, admin.deleteAccounts)
    router.unary(AdminService.name, "RevokeRefreshTokens", authenticate: adminKey, admin.revokeRefreshTokens)
    router.unary(AdminService.name, "SetCustomClaims", authenticate: adminKey, admin.setCustomClaims)
    router.unary(AdminService.name, "PreviewCleanup", authenticate: adminKey, admin.previewCleanup)
    router.unary(AdminService.name, "RunCleanup", authenticate: adminKey, admin.runCleanup)
    router.unary(AdminService.name, "GetUsage", authenticate: adminKey, admin.getUsage)
    router.unary(AdminService.name, "Backup", authenticate: adminKey, admin.backup)
    router.unary(AdminService.name, "ImportAccounts", authenticate: adminKey, admin.importAccounts)
    router.unary(AdminService.name, "ExportAccounts", authenticate: adminKey, admin.exportAccounts)
    ClusterRoutes.register(in: &router, node: cluster, authenticate: adminKey)
  }
}
