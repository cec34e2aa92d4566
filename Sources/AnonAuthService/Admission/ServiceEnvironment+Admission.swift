import AnonAuthStore
import AnonAuthWire

extension ServiceEnvironment {
  /// Who a call's expensive work is admitted as: its project and its end user's IP key
  /// (the one the sign-up quota counts: IPv4 address or IPv6 /64; `x-end-user-ip` only
  /// from trusted callers).
  func admissionSource(_ context: CallContext, project: ProjectRecord) -> Admission.Source {
    let ip = ipPolicy.endUserIP(context, callerIsAdmin: callerIsAdmin(context)).flatMap(IPKey.make)
    return Admission.Source(projectID: project.projectID, ipKey: ip)
  }

  /// Runs a call's handler in the call's admission scope: `body` gets the `Admitted`
  /// that password hashing, signing, end-user writes and provider calls require, and
  /// each of them is admitted per IP and project (`Admission`). A service method enters
  /// it once, after it knows the call's project.
  func admitting<T: Sendable>(
    _ context: CallContext, project: ProjectRecord, _ body: (Admitted) async throws(RPCError) -> T
  ) async throws(RPCError) -> T {
    try await admission.scope(admissionSource(context, project: project), body)
  }
}
