import Foundation

/// The permission bits of the file at `path` (0o600, ...), for the suites that check what
/// the daemon and the store let others read.
public func fileMode(_ path: String) throws -> Int {
  let attributes = try FileManager.default.attributesOfItem(atPath: path)
  guard let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue else {
    throw FileModeUnknown(path: path)
  }
  return mode
}

/// The file system gave no permission bits for `path`.
public struct FileModeUnknown: Error {
  public let path: String
}
