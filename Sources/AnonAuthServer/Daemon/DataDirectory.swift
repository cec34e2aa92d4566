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

  /// Creates the directory (0700) when missing.
  public func prepare() throws(ConfigError) {
    do {
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw ConfigError("--data-dir \(path): cannot create it (\(error.localizedDescription))")
    }
    guard access(path, W_OK) == 0 else { throw ConfigError("--data-dir \(path): not writable") }
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
      try Self.writeFile(devCertificate, Array(made.certificatePEM.utf8), mode: 0o644)
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
