import AnonAuthWire
import Foundation

/// The rules of a project's email settings (`UpdateProjectConfig`).
enum EmailProjectSettings {
  /// At most 100 host names (letters, digits, dots and hyphens, at most 253 bytes each).
  static func validateDomains(_ domains: [String]) throws(RPCError) {
    guard domains.count <= 100 else { throw RPCError(.invalidConfig, "authorized_domains: at most 100") }
    for domain in domains {
      let ok =
        !domain.isEmpty && domain.utf8.count <= 253
        && domain.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
      guard ok else {
        throw RPCError(.invalidConfig, "authorized_domains: \"\(domain.prefix(64))\" is not a host name")
      }
    }
  }

  /// Empty, `addr@domain` or `Name <addr@domain>`, without line breaks (a header value).
  static func validateSender(_ sender: String) throws(RPCError) {
    if sender.isEmpty { return }
    guard sender.utf8.count <= 256, !sender.contains(where: { $0.isNewline }),
      SenderAddress.address(of: sender).flatMap(EmailAddress.normalize) != nil
    else {
      throw RPCError(.invalidConfig, "email_sender must be \"Name <address>\" or an address")
    }
  }
}

/// The address part of a From value: `Name <a@b>` or `a@b`.
public enum SenderAddress {
  public static func address(of sender: String) -> String? {
    if let open = sender.lastIndex(of: "<"), let close = sender.lastIndex(of: ">"), open < close {
      return String(sender[sender.index(after: open)..<close])
    }
    return sender.contains("<") || sender.contains(">") ? nil : sender.trimmingCharacters(in: .whitespaces)
  }
}
