import Foundation

extension ImportHashConfig {
  /// Longer than any real config (the console's block is about 200 bytes).
  public static let maxTextBytes = 16 * 1024

  /// A config as the operator pastes it: the Firebase console's block
  ///
  ///     hash_config {
  ///       algorithm: SCRYPT,
  ///       base64_signer_key: jxspr8Ki…,
  ///       base64_salt_separator: Bw==,
  ///       rounds: 8,
  ///       mem_cost: 14,
  ///     }
  ///
  /// (any whitespace and line breaks, trailing comma or not, values quoted or not), or a
  /// JSON object with the same keys, optionally inside `{"hash_config": {…}}`.
  ///
  /// Keys are matched ignoring case and `_`/`-`, so the console's snake_case, camelCase
  /// and the CLI flags' names all work: `algorithm` (`hash_algo`), `base64_signer_key`
  /// (`signerKey`, `base64_hmac_key`, `hash_key`), `base64_salt_separator`
  /// (`saltSeparator`), `rounds`, `mem_cost` (`memoryCost`), and `hash_input_order`
  /// (`SALT_FIRST` or `PASSWORD_FIRST`; the API's `passwordHashOrder` spellings too).
  /// Algorithm and order values are case-insensitive; keys are base64.
  /// - Throws: `ImportHashConfigError` naming the key or value at fault.
  public init(parsing text: String) throws(ImportHashConfigError) {
    guard text.utf8.count <= Self.maxTextBytes else {
      throw ImportHashConfigError(.tooLarge, "longer than \(Self.maxTextBytes) bytes")
    }
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    let members: [String: JSONValue]
    // Read as before the strict parser (trailing commas too): operators paste this text.
    if let json = JSONValue(lenientJSONBytes: Array(trimmed.utf8)) {
      guard var object = json.objectValue else {
        throw ImportHashConfigError(.syntax, "expected a JSON object or a hash_config { ... } block")
      }
      if object.count == 1, let (key, value) = object.first, Self.canonical(key) == "hashconfig",
        let inner = value.objectValue
      {
        object = inner
      }
      members = object
    } else {
      members = try Self.blockMembers(trimmed)
    }
    try self.init(members: members)
  }

  /// The settings, keyed by what a key means.
  private enum Setting: String {
    case algorithm, key = "key", saltSeparator = "salt separator", rounds, memCost = "mem_cost"
    case order = "hash_input_order"
  }

  /// Every accepted key spelling, lowercased without `_` and `-`.
  private static let settings: [String: Setting] = [
    "algorithm": .algorithm, "hashalgo": .algorithm, "hashalgorithm": .algorithm,
    "base64signerkey": .key, "signerkey": .key, "base64hmackey": .key, "hmackey": .key,
    "base64hashkey": .key, "hashkey": .key,
    "base64saltseparator": .saltSeparator, "saltseparator": .saltSeparator,
    "rounds": .rounds,
    "memcost": .memCost, "memorycost": .memCost,
    "hashinputorder": .order, "passwordhashorder": .order,
  ]

  private static func canonical(_ key: String) -> String {
    String(key.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" })
  }

  /// `key: value` pairs of the console's block, values as strings.
  private static func blockMembers(_ text: String) throws(ImportHashConfigError) -> [String: JSONValue] {
    var body = Substring(text)
    if body.lowercased().hasPrefix("hash_config") {
      body = body.dropFirst("hash_config".count).drop { $0.isWhitespace || $0 == ":" || $0 == "=" }
    }
    guard body.first == "{", body.last == "}" else {
      throw ImportHashConfigError(.syntax, "expected a hash_config { ... } block or a JSON object")
    }
    body = body.dropFirst().dropLast()
    guard !body.contains("{"), !body.contains("}") else {
      throw ImportHashConfigError(.syntax, "unexpected { or } inside the hash_config block")
    }
    var members: [String: JSONValue] = [:]
    for item in body.split(whereSeparator: { $0 == "," || $0.isNewline }) {
      let entry = item.trimmingCharacters(in: .whitespaces)
      if entry.isEmpty { continue }
      guard let colon = entry.firstIndex(of: ":") else {
        let shown = entry.prefix { !$0.isWhitespace }.prefix(24)
        throw ImportHashConfigError(.syntax, "expected 'key: value', found '\(shown)'")
      }
      let key = unquoted(entry[..<colon].trimmingCharacters(in: .whitespaces))
      let value = unquoted(entry[entry.index(after: colon)...].trimmingCharacters(in: .whitespaces))
      guard !key.isEmpty else { throw ImportHashConfigError(.syntax, "a line has a value but no key") }
      guard members[key] == nil else { throw ImportHashConfigError(.duplicateKey, "\(key) is given twice") }
      members[key] = .string(value)
    }
    return members
  }

  /// `text` without one pair of matching surrounding quotes.
  private static func unquoted(_ text: String) -> String {
    guard text.count >= 2, let first = text.first, first == text.last, first == "\"" || first == "'" else {
      return text
    }
    return String(text.dropFirst().dropLast())
  }

  /// The config from members keyed by any accepted spelling.
  private init(members: [String: JSONValue]) throws(ImportHashConfigError) {
    var values: [Setting: (key: String, value: JSONValue)] = [:]
    for (key, value) in members.sorted(by: { $0.key < $1.key }) {
      guard let setting = Self.settings[Self.canonical(key)] else {
        throw ImportHashConfigError(.unknownKey, "unknown key '\(key.prefix(64))'")
      }
      if let earlier = values[setting] {
        throw ImportHashConfigError(
          .duplicateKey, "\(earlier.key) and \(key) both give the \(setting.rawValue)")
      }
      if value == .null { continue }
      values[setting] = (key, value)
    }

    guard let algorithmValue = values[.algorithm] else {
      throw ImportHashConfigError(.missing, "no algorithm (expected algorithm: SCRYPT, for example)")
    }
    let algorithmName = try Self.string(algorithmValue).uppercased()
    guard let algorithm = Algorithm(rawValue: algorithmName) else {
      let supported = Algorithm.allCases.map(\.rawValue).joined(separator: ", ")
      throw ImportHashConfigError(
        .unknownAlgorithm,
        "algorithm '\(algorithmName.prefix(32))' is not supported (supported: \(supported))")
    }

    let uses: Set<Setting> =
      switch algorithm {
      case .scrypt: [.key, .saltSeparator, .rounds, .memCost]
      case .pbkdf2SHA256: [.rounds]
      case .hmacSHA256: [.key, .order]
      case .bcrypt: []
      }
    let needs: Set<Setting> =
      switch algorithm {
      case .scrypt: [.key, .rounds, .memCost]
      case .pbkdf2SHA256: [.rounds]
      case .hmacSHA256: [.key]
      case .bcrypt: []
      }
    for setting in [Setting.key, .rounds, .memCost] where needs.contains(setting) && values[setting] == nil {
      let name = setting == .key ? "base64_signer_key" : setting.rawValue
      throw ImportHashConfigError(.missing, "\(algorithm.rawValue) needs \(name)")
    }
    // Settings the algorithm does not use are ignored, as firebase-tools ignores them.
    func value(_ setting: Setting) -> (key: String, value: JSONValue)? {
      uses.contains(setting) ? values[setting] : nil
    }

    try self.init(
      algorithm: algorithm,
      signerKey: try value(.key).map(Self.bytes) ?? [],
      saltSeparator: try value(.saltSeparator).map(Self.bytes) ?? [],
      rounds: try value(.rounds).map(Self.integer) ?? 0,
      memCost: try value(.memCost).map(Self.integer) ?? 0,
      saltFirst: try value(.order).map(Self.saltFirst) ?? false)
  }

  private static func string(_ entry: (key: String, value: JSONValue)) throws(ImportHashConfigError) -> String
  {
    guard let text = entry.value.stringValue else {
      throw ImportHashConfigError(.invalidValue, "\(entry.key) must be a string")
    }
    return text
  }

  private static func bytes(_ entry: (key: String, value: JSONValue)) throws(ImportHashConfigError) -> [UInt8]
  {
    guard let bytes = ConfigBase64.decode(try string(entry)) else {
      throw ImportHashConfigError(.invalidValue, "\(entry.key) is not base64")
    }
    return bytes
  }

  /// A whole number, as a JSON number or as text (the block has only text).
  private static func integer(_ entry: (key: String, value: JSONValue)) throws(ImportHashConfigError) -> Int {
    let number: Int64? =
      if let text = entry.value.stringValue { Int64(text) } else { entry.value.int64Value }
    guard let number, let value = Int(exactly: number) else {
      throw ImportHashConfigError(.invalidValue, "\(entry.key) must be a whole number")
    }
    return value
  }

  private static func saltFirst(_ entry: (key: String, value: JSONValue)) throws(ImportHashConfigError)
    -> Bool
  {
    switch try string(entry).uppercased() {
    case "SALT_FIRST", "SALT_AND_PASSWORD": return true
    case "PASSWORD_FIRST", "PASSWORD_AND_SALT", "UNSPECIFIED_ORDER": return false
    default:
      throw ImportHashConfigError(.invalidValue, "\(entry.key) must be SALT_FIRST or PASSWORD_FIRST")
    }
  }
}
