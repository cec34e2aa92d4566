import AnonAuthStore
import AnonAuthWire
import Foundation

/// The `continueUrl` of an email action: where the link leads once the action is done.
/// Only an absolute http(s) URL whose host is one of the project's `authorized_domains`
/// (exactly, case-insensitively; `localhost` by default, as Firebase's), so that a mail
/// sent by the project cannot send its reader anywhere an attacker chose.
public enum ContinueURL {
  /// - Throws: `INVALID_CONTINUE_URI` for a URL that is not absolute http(s) (or over 2 KiB),
  ///   `UNAUTHORIZED_DOMAIN` for a host the project does not list.
  public static func check(_ url: String, project: ProjectRecord) throws(RPCError) {
    guard url.utf8.count <= 2048, let components = URLComponents(string: url),
      let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http",
      let host = components.host?.lowercased(), !host.isEmpty, components.user == nil,
      components.password == nil
    else {
      throw RPCError(.invalidContinueUri, "continue_url must be an absolute http or https URL")
    }
    let allowed = project.authorizedDomains.contains { $0.lowercased() == host }
    guard allowed else {
      throw RPCError(.unauthorizedDomain, "\(host) is not one of the project's authorized_domains")
    }
  }
}
