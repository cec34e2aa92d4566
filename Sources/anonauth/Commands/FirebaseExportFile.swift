import AnonAuthWire
import Foundation

/// The users of a `firebase auth:export` file, JSON (`{"users": [...]}`) or CSV, as
/// `ImportedAccount`s. A row that cannot be read at all is kept as an empty account, so
/// the server reports it with its index (INVALID_UID) like any other bad row.
enum FirebaseExportFile {
  static func load(_ path: String) throws(CLIError) -> [ImportedAccount] {
    guard let data = FileManager.default.contents(atPath: path) else { throw .usage("cannot read \(path)") }
    if data.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) == UInt8(ascii: "{") {
      return try json(data, path: path)
    }
    return csv(String(decoding: data, as: UTF8.self))
  }

  static func json(_ data: Data, path: String) throws(CLIError) -> [ImportedAccount] {
    guard let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let users = top["users"] as? [Any]
    else { throw .usage("\(path): expected {\"users\": [...]} as firebase auth:export writes it") }
    return users.map { ($0 as? [String: Any]).map(account) ?? ImportedAccount() }
  }

  static func account(_ user: [String: Any]) -> ImportedAccount {
    func string(_ key: String) -> String { user[key] as? String ?? "" }
    func millis(_ key: String) -> Int64 {
      // auth:export writes milliseconds as strings; numbers are accepted too.
      if let text = user[key] as? String { return Int64(text) ?? -1 }
      return (user[key] as? NSNumber)?.int64Value ?? 0
    }
    var a = ImportedAccount()
    a.localId = string("localId")
    a.email = string("email")
    a.emailVerified = user["emailVerified"] as? Bool ?? false
    a.displayName = string("displayName")
    a.photoUrl = string("photoUrl")
    a.disabled = user["disabled"] as? Bool ?? false
    a.createdAtMs = millis("createdAt")
    a.lastSignInAtMs = millis("lastSignedInAt")
    a.customClaimsJson = string("customAttributes")
    a.passwordHash = base64(string("passwordHash"))
    a.salt = base64(string("salt"))
    a.anonauthPasswordHash = string("anonauthPasswordHash")
    a.providers = (user["providerUserInfo"] as? [[String: Any]] ?? []).map { p in
      ImportedProvider(
        providerId: p["providerId"] as? String ?? "", rawId: p["rawId"] as? String ?? "",
        email: p["email"] as? String ?? "", displayName: p["displayName"] as? String ?? "",
        photoUrl: p["photoUrl"] as? String ?? "")
    }
    return a
  }

  /// Firebase writes URL-safe or standard base64 depending on the tool; both are read.
  static func base64(_ text: String) -> [UInt8] {
    guard !text.isEmpty else { return [] }
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while standard.count % 4 != 0 { standard += "=" }
    // Undecodable: a byte the server refuses as INVALID_PASSWORD_HASH, not a silent skip.
    return Data(base64Encoded: standard).map(Array.init) ?? [0]
  }

  /// The CSV columns of `auth:export --format=csv`: UID, Email, Email Verified, Password
  /// Hash, Password Salt, Name, Photo URL, then ID/Email/Display Name/Photo URL for
  /// Google, Facebook, Twitter and GitHub, User Creation Time, Last Sign-In Time, Phone.
  static func csv(_ text: String) -> [ImportedAccount] {
    let providers = ["google.com", "facebook.com", "twitter.com", "github.com"]
    return CSVRows.parse(text).filter { !($0.count == 1 && $0[0].isEmpty) }.map { row in
      func field(_ i: Int) -> String { i < row.count ? row[i] : "" }
      var a = ImportedAccount()
      a.localId = field(0)
      a.email = field(1)
      a.emailVerified = field(2).lowercased() == "true"
      a.passwordHash = base64(field(3))
      a.salt = base64(field(4))
      a.displayName = field(5)
      a.photoUrl = field(6)
      for (n, provider) in providers.enumerated() where !field(7 + 4 * n).isEmpty {
        a.providers.append(
          ImportedProvider(
            providerId: provider, rawId: field(7 + 4 * n), email: field(8 + 4 * n),
            displayName: field(9 + 4 * n), photoUrl: field(10 + 4 * n)))
      }
      a.createdAtMs = Int64(field(23)) ?? 0
      a.lastSignInAtMs = Int64(field(24)) ?? 0
      if !field(25).isEmpty { a.providers.append(ImportedProvider(providerId: "phone", rawId: field(25))) }
      return a
    }
  }
}

/// RFC 4180 rows: quoted fields may hold commas, quotes ("") and line breaks.
enum CSVRows {
  static func parse(_ text: String) -> [[String]] {
    var rows: [[String]] = []
    var row: [String] = []
    var field = ""
    var quoted = false
    var iterator = text.unicodeScalars.makeIterator()
    var pending: Unicode.Scalar? = nil
    while let c = pending ?? iterator.next() {
      pending = nil
      if quoted {
        if c == "\"" {
          if let next = iterator.next() {
            if next == "\"" { field.unicodeScalars.append("\"") } else { quoted = false; pending = next }
          } else {
            quoted = false
          }
        } else {
          field.unicodeScalars.append(c)
        }
        continue
      }
      switch c {
      case "\"": quoted = true
      case ",":
        row.append(field)
        field = ""
      case "\r": break
      case "\n":
        row.append(field)
        rows.append(row)
        row = []
        field = ""
      default: field.unicodeScalars.append(c)
      }
    }
    if !field.isEmpty || !row.isEmpty {
      row.append(field)
      rows.append(row)
    }
    return rows
  }
}
