import AnonAuthService
import AnonAuthWire

/// Puts every method of the four services into the router, each with its service's
/// credential check: the generated `register(in:)` of each handler protocol (Protos/
/// says which credential a service needs).
public enum ServiceRoutes {
  public static func register(
    in router: inout Router, environment env: ServiceEnvironment, health: HealthService,
    cleanup: CleanupWorker,
    backupDirectory: String, cluster: ClusterNode? = nil
  ) {
    health.register(in: &router)

    let accounts = AccountService(environment: env)
    let apiKey: Router.Authenticator = { context throws(RPCError) in try accounts.authenticate(context) }
    accounts.register(in: &router, authenticate: apiKey)
    TokenService(environment: env).register(in: &router, authenticate: apiKey)

    let admin = AdminService(
      environment: env, cleanup: cleanup, backupDirectory: backupDirectory,
      cluster: ClusterAdmin(node: cluster))
    admin.register(in: &router, authenticate: { context throws(RPCError) in try admin.authenticate(context) })
  }
}
