extension ImportHashConfig {
  /// The version `encoded()` writes; `init(decoding:)` accepts only versions it knows.
  public static let encodingVersion: Int64 = 1

  /// The config as bytes to seal in the store: compact JSON with sorted keys and
  /// base64 keys, every field present, so that equal configs give equal bytes:
  ///
  ///     {"algorithm":"SCRYPT","mem_cost":14,"rounds":8,"salt_first":false,
  ///      "salt_separator":"Bw==","signer_key":"jxspr8Ki…","version":1}
  ///
  /// It holds the signer key: seal it, never store or log it in the clear.
  public func encoded() -> [UInt8] {
    let object: JSONValue = [
      "version": .int(Self.encodingVersion),
      "algorithm": .string(algorithm.rawValue),
      "signer_key": .string(ConfigBase64.encode(signerKey)),
      "salt_separator": .string(ConfigBase64.encode(saltSeparator)),
      "rounds": .int(Int64(rounds)),
      "mem_cost": .int(Int64(memCost)),
      "salt_first": .bool(saltFirst),
    ]
    return object.jsonBytes
  }

  /// A config from `encoded()`'s bytes, validated again as on import.
  /// - Throws: `ImportHashConfigError` (`.invalidEncoding`) for another version, a
  ///   missing or extra field, or a field of the wrong type; the validation's errors for
  ///   values out of bounds.
  public init(decoding bytes: [UInt8]) throws(ImportHashConfigError) {
    guard bytes.count <= Self.maxTextBytes, let object = JSONValue(jsonBytes: bytes)?.objectValue else {
      throw ImportHashConfigError(.invalidEncoding, "the sealed config is not a JSON object")
    }
    guard object["version"]?.int64Value == Self.encodingVersion else {
      throw ImportHashConfigError(
        .invalidEncoding, "the sealed config's version is not \(Self.encodingVersion)")
    }
    let fields: Set<String> = [
      "version", "algorithm", "signer_key", "salt_separator", "rounds", "mem_cost", "salt_first",
    ]
    guard Set(object.keys) == fields,
      let algorithm = object["algorithm"]?.stringValue.flatMap(Algorithm.init(rawValue:)),
      let signerKey = object["signer_key"]?.stringValue.flatMap(ConfigBase64.decode),
      let saltSeparator = object["salt_separator"]?.stringValue.flatMap(ConfigBase64.decode),
      let rounds = object["rounds"]?.int64Value.flatMap({ Int(exactly: $0) }),
      let memCost = object["mem_cost"]?.int64Value.flatMap({ Int(exactly: $0) }),
      let saltFirst = object["salt_first"]?.boolValue
    else {
      throw ImportHashConfigError(
        .invalidEncoding, "the sealed config's fields are not as version 1 writes them")
    }
    try self.init(
      algorithm: algorithm, signerKey: signerKey, saltSeparator: saltSeparator, rounds: rounds,
      memCost: memCost, saltFirst: saltFirst)
  }

  /// A stable name for the config: lowercase hex of the first 16 bytes of SHA-256 over
  /// `encoded()`. The same config imported twice gets the same id, so imported hashes
  /// can name their config's row. The signer key is 64 random bytes in Firebase, so the
  /// digest does not help anyone guess it.
  public var configID: String {
    SHA256.hash(encoded()).prefix(16).map { byte in
      let digits = Array("0123456789abcdef")
      return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
    }.joined()
  }
}
