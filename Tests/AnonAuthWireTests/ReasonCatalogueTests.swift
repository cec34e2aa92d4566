import Foundation
import Testing

@testable import AnonAuthWire

/// The reason catalogue is complete: every reason the server can send is in it (so
/// docs/reasons.md, generated from it, lists it), and the contract's names and codes
/// are the ones clients rely on.
@Suite struct ReasonCatalogueTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  static func source(_ path: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  }

  /// Every `.swift` file under `Sources/<module>`, with its path from the repository root.
  static func swiftFiles(under module: String) throws -> [(path: String, text: String)] {
    let base = root.appendingPathComponent("Sources/\(module)")
    guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
    var out: [(String, String)] = []
    for case let relative as String in walker where relative.hasSuffix(".swift") {
      out.append(("Sources/\(module)/\(relative)", try source("Sources/\(module)/\(relative)")))
    }
    return out
  }

  /// The names of `static let x = <type>("NAME"` declarations in `text`.
  static func declaredNames(_ type: String, in text: String) throws -> [String] {
    let pattern = try Regex("static let \\w+ = \(type)\\(\\s*\"([A-Z_]+)\"")
    return text.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) }
  }

  @Test func everyReasonStaticIsCatalogued() throws {
    let declared = try Self.declaredNames(
      "Reason", in: Self.source("Sources/AnonAuthWire/Status/Reason.swift"))
    let catalogued = ReasonCatalogue.reasons.map(\.reason.name)
    #expect(declared.count > 30)
    #expect(Set(declared) == Set(catalogued))
    #expect(Set(catalogued).count == catalogued.count, "a reason is catalogued twice")
  }

  @Test func everyGoAwayReasonIsCatalogued() throws {
    let declared = try Self.declaredNames(
      "GoAwayReason", in: Self.source("Sources/AnonAuthWire/Status/GoAwayReason.swift"))
    let catalogued = ReasonCatalogue.goAwayReasons.map(\.reason.name)
    #expect(declared.count == 5)
    #expect(Set(declared) == Set(catalogued))
    #expect(Set(catalogued).count == catalogued.count)
  }

  @Test func everyImportRowReasonIsCatalogued() throws {
    let declared = try Self.declaredNames(
      "ImportRowReason", in: Self.source("Sources/AnonAuthWire/Status/ImportRowReason.swift"))
    let catalogued = ReasonCatalogue.importRowReasons.map(\.reason.name)
    #expect(declared.count > 10)
    #expect(Set(declared) == Set(catalogued))
    #expect(Set(catalogued).count == catalogued.count)
  }

  /// The server names reasons through the catalogued types only: an
  /// `RPCError(code:reason:"…")` with a literal reason, or a reason made outside its type's
  /// own file, would send a reason the catalogue (and the page) does not know.
  @Test func serverSendsOnlyCataloguedReasons() throws {
    let literalReason = try Regex("RPCError\\(\\s*code:[^)]*reason:\\s*\"")
    let construction = try Regex("[^A-Za-z](GoAway|ImportRow)?Reason\\(")
    var offenders: [String] = []
    for module in ["AnonAuthWire", "AnonAuthService", "AnonAuthServer", "AnonAuthNet", "AnonAuthStore"] {
      for file in try Self.swiftFiles(under: module) where !file.path.contains("/Generated/") {
        if file.text.contains(literalReason) {
          offenders.append("\(file.path): RPCError with a literal reason")
        }
        let own = ["Reason", "GoAwayReason", "ImportRowReason"].contains {
          file.path.hasSuffix("Status/\($0).swift")
        }
        if !own && file.text.contains(construction) { offenders.append("\(file.path): makes a reason") }
      }
    }
    #expect(offenders.isEmpty, "\(offenders)")
  }

  /// The contract's reasons keep their names and codes (clients branch on both).
  @Test func contractNamesAndCodesAreUnchanged() {
    let contract: [String: Int32] = [
      "API_KEY_INVALID": 16, "ADMIN_KEY_INVALID": 16, "OPERATION_NOT_ALLOWED": 9,
      "TOO_MANY_ATTEMPTS_TRY_LATER": 8, "INVALID_ID_TOKEN": 16, "TOKEN_EXPIRED": 16,
      "INVALID_REFRESH_TOKEN": 16, "USER_NOT_FOUND": 5, "USER_DISABLED": 7, "INVALID_EMAIL": 3,
      "WEAK_PASSWORD": 3, "EMAIL_EXISTS": 6, "INVALID_LOGIN_CREDENTIALS": 16,
      "CREDENTIAL_ALREADY_IN_USE": 6, "PROVIDER_ALREADY_LINKED": 9, "INVALID_IDP_RESPONSE": 3,
      "NO_SUCH_PROVIDER": 9, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN": 9, "FORBIDDEN_CLAIM": 3,
      "PROJECT_NOT_FOUND": 5, "MALFORMED_REQUEST": 3, "UNKNOWN_METHOD": 12, "DEADLINE_EXCEEDED": 4,
      "TOO_MANY_CALLS": 8, "SHUTTING_DOWN": 14, "INTERNAL": 13,
    ]
    for (name, code) in contract {
      #expect(ReasonCatalogue.entry(named: name)?.reason.code.rawValue == code, "\(name)")
    }
    let goAway = ReasonCatalogue.goAwayReasons.map(\.reason.name)
    for name in ["SHUTTING_DOWN", "IDLE_TIMEOUT", "FRAME_TOO_LARGE", "MALFORMED_FRAME", "RESOURCE_EXHAUSTED"]
    {
      #expect(goAway.contains(name))
    }
  }

  @Test func everyEntrySaysWhenAndWhatToDo() {
    for entry in ReasonCatalogue.reasons {
      #expect(!entry.when.isEmpty && !entry.advice.isEmpty, "\(entry.reason)")
    }
    for entry in ReasonCatalogue.goAwayReasons {
      #expect(!entry.when.isEmpty && !entry.advice.isEmpty, "\(entry.reason)")
    }
  }
}
