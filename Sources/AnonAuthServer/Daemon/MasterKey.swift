import Foundation

/// The 32-byte key that encrypts signing keys at rest, read from `--master-key-file`:
/// 64 hex digits (what `--dev` writes) or 32 raw bytes.
public struct MasterKey: Sendable {
  public let bytes: [UInt8]

  public static func load(path: String) throws(ConfigError) -> MasterKey {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ConfigError("--master-key-file \(path): cannot read it")
    }
    let raw = Array(data)
    if raw.count == 32 { return MasterKey(bytes: raw) }
    let text = String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard text.count == 64 else {
      throw ConfigError("--master-key-file \(path): expected 64 hex digits or 32 bytes")
    }
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
      let next = text.index(index, offsetBy: 2)
      guard let byte = UInt8(text[index..<next], radix: 16) else {
        throw ConfigError("--master-key-file \(path): expected 64 hex digits or 32 bytes")
      }
      bytes.append(byte)
      index = next
    }
    return MasterKey(bytes: bytes)
  }
}
