import AnonAuthCrypto
import Foundation
import Glibc

/// The files the daemon keeps in its data dir, and the `--dev` defaults it makes there.
public struct DataDirectory: Sendable {
  public let path: String

  public init(path: String) {
    self.path = URL(fileURLWithPath: path).standardizedFileURL.path
  }

  public var devCertificate: String { path + "/tls/dev-cert.pem" }
  public var devPrivateKey: String { path + "/tls/dev-key.pem" }
  public var devMasterKey: String { path + "/master.key" }
  public var clientJSON: String { path + "/client.json" }

  /// Creates the directory (0700) when missing. One that exists and that group or others
  /// may use is tightened to 0700, and so is everything in it (files to at most 0600):
  /// the store, its WAL, keys, `client.json` and backups are secrets.
  /// - Returns: what was tightened and what was left open, one line each, for the log.
  /// - Throws: `ConfigError` (exit 2) when a file in it is open to others and cannot be
  ///   tightened (not ours, say), or the directory is not writable.
  @discardableResult
  public func prepare() throws(ConfigError) -> PermissionChanges {
    do {
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw ConfigError("--data-dir \(path): cannot create it (\(error.localizedDescription))")
    }
    var changes = PermissionChanges()
    try Self.tighten(path, depth: 0, into: &changes)
    guard access(path, W_OK) == 0 else { throw ConfigError("--data-dir \(path): not writable") }
    return changes
  }

  /// What `prepare` did about permissions, for the start-up log.
  public struct PermissionChanges: Sendable {
    /// "path: 755 -> 700", one a tightened item.
    public var tightened: [String] = []
    /// Directories open to group or others that another user owns (a platform's volume),
    /// left as they are.
    public var leftOpen: [String] = []
    public var isEmpty: Bool { tightened.isEmpty && leftOpen.isEmpty }
  }

  /// How deep `prepare` looks: the data dir, `tls/`, `backups/` and one level more.
  static let tightenDepth = 3

  /// Drops group and other bits from `item` (a directory keeps its owner's x bit and its
  /// setgid and sticky bits) and, for a directory, from what it holds. Symbolic links are
  /// neither followed nor changed.
  ///
  /// A directory someone else owns is left as it is and reported: that is how platforms
  /// hand over volumes (a Kubernetes volume with `fsGroup` is root's, mode 2775), the
  /// daemon cannot change it, and what it writes there is 0600 anyway (umask 077). A
  /// *file* open to others that the daemon cannot tighten stops the start.
  static func tighten(_ item: String, depth: Int, into changes: inout PermissionChanges) throws(ConfigError) {
    var status = stat()
    guard lstat(item, &status) == 0 else { return }
    let kind = status.st_mode & S_IFMT
    guard kind == S_IFDIR || kind == S_IFREG else { return }
    let mode = status.st_mode & 0o7777
    if mode & 0o077 != 0 {
      let wanted = kind == S_IFDIR ? mode & 0o7700 | 0o700 : mode & 0o600
      if status.st_uid == geteuid(), chmod(item, wanted) == 0 {
        changes.tightened.append("\(item): \(String(mode, radix: 8)) -> \(String(wanted, radix: 8))")
      } else if kind == S_IFDIR && status.st_uid != geteuid() {
        changes.leftOpen.append(
          "\(item): \(String(mode, radix: 8)) left as it is (owned by uid \(status.st_uid), not this"
            + " process; what the daemon writes in it is 0600)")
      } else {
        throw ConfigError(
          "--data-dir: \(item) is mode \(String(mode, radix: 8)) (open to others) and cannot be tightened")
      }
    }
    guard kind == S_IFDIR, depth < tightenDepth,
      let names = try? FileManager.default.contentsOfDirectory(atPath: item)
    else { return }
    for name in names.sorted() { try tighten(item + "/" + name, depth: depth + 1, into: &changes) }
  }

  /// The `--dev` certificate and key, made once and never remade while both files exist.
  public func ensureDevCertificate() throws(ConfigError) {
    let fm = FileManager.default
    if fm.fileExists(atPath: devCertificate) && fm.fileExists(atPath: devPrivateKey) { return }
    do {
      try fm.createDirectory(
        atPath: path + "/tls", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      let made = try SelfSignedCertificate.make()
      try Self.writeFile(devPrivateKey, Array(made.privateKeyPEM.utf8), mode: 0o600)
      try Self.writeFile(devCertificate, Array(made.certificatePEM.utf8), mode: 0o600)
    } catch {
      throw ConfigError("dev certificate: \(error)")
    }
  }

  /// The `--dev` master key: 32 random bytes as 64 hex digits, 0600, made once.
  public func ensureDevMasterKey() throws(ConfigError) {
    if FileManager.default.fileExists(atPath: devMasterKey) { return }
    do {
      let key = try SecureRandom.bytes(32)
      let hex = key.map { String(format: "%02x", $0) }.joined() + "\n"
      try Self.writeFile(devMasterKey, Array(hex.utf8), mode: 0o600)
    } catch {
      throw ConfigError("dev master key: \(error)")
    }
  }

  /// Writes through a temporary file and a rename, with the mode set before any byte is
  /// written, so a secret is never briefly readable and never half-written.
  public static func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t) throws(ConfigError) {
    let temp = path + ".tmp-\(getpid())"
    let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw ConfigError("\(path): cannot write it") }
    var written = 0
    while written < bytes.count {
      let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + written }, bytes.count - written) }
      if n <= 0 {
        close(fd)
        unlink(temp)
        throw ConfigError("\(path): write failed")
      }
      written += n
    }
    fchmod(fd, mode)
    fsync(fd)
    close(fd)
    guard rename(temp, path) == 0 else {
      unlink(temp)
      throw ConfigError("\(path): rename failed")
    }
  }
}
