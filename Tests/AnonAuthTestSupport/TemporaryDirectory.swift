import Foundation

/// A directory of its own for each test, removed when the test ends (`remove()`), so that
/// tests running side by side never share a file.
public struct TemporaryDirectory: Sendable {
  public let path: String

  /// Creates `<temporary directory>/<prefix>-<UUID>`.
  public init(prefix: String = "anonauth-test") throws {
    path =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  public func file(_ name: String) -> String { path + "/" + name }

  public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
