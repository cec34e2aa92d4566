import AnonAuthCrypto
import AnonAuthDqlite
import AnonAuthService
import Foundation
import Synchronization
import Testing

@testable import AnonAuthServer

/// SIGHUP on the cluster identity: new files are taken, a bad one keeps the identity in
/// use and says so in the log; `--dev` writes its files, again at each start.
/// A class, so that each test's directory is removed when the test ends.
@Suite final class ClusterTLSReloadTests {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "cluster-reload-\(UUID().uuidString)"
  ).path

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  private func files(_ name: String) throws -> ClusterTLSFiles {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let now = Date()
    let ca = try ClusterCertificates.authority(
      commonName: "\(name) CA", notBefore: now.addingTimeInterval(-60), notAfter: now.addingTimeInterval(3600)
    )
    let node = try ClusterCertificates.node(
      commonName: name, authority: ca, notBefore: now.addingTimeInterval(-60),
      notAfter: now.addingTimeInterval(3600))
    let files = ClusterTLSFiles(
      caFile: "\(directory)/\(name)-ca.crt", certificateFile: "\(directory)/\(name).crt",
      keyFile: "\(directory)/\(name).key")
    try ca.certificatePEM.write(toFile: files.caFile, atomically: true, encoding: .utf8)
    try node.certificatePEM.write(toFile: files.certificateFile, atomically: true, encoding: .utf8)
    try node.privateKeyPEM.write(toFile: files.keyFile, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: files.keyFile)
    return files
  }

  @Test func aBadFileKeepsTheCurrentIdentityAndAGoodOneReplacesIt() throws {
    let lines = Mutex<[String]>([])
    let logger = Logger(minimum: .info, sink: { line in lines.withLock { $0.append(line) } })
    let first = try files("first")
    let slot = ClusterTLSSlot(try ClusterTLS.context(first))
    let before = slot.context.certificateSHA256

    var broken = first
    broken.certificateFile = "\(directory)/missing.crt"
    ClusterTLS.reload(broken, into: slot, logger: logger)
    #expect(slot.context.certificateSHA256 == before)
    #expect(lines.withLock { $0.contains { $0.contains("cluster tls reload failed") } })

    let second = try files("second")
    ClusterTLS.reload(second, into: slot, logger: logger)
    #expect(slot.context.certificateSHA256 != before)
    #expect(lines.withLock { $0.contains { $0.contains("cluster tls reloaded") } })
  }

  @Test func devModeWritesTheCAAndAPrivateNodeKeyAndStartsAgain() throws {
    let key = [UInt8](repeating: 3, count: 32)
    _ = try ClusterTLS.load(.development, id: 1, dataDir: directory + "/one", masterKey: key)
    // A restart overwrites the files it made.
    _ = try ClusterTLS.load(.development, id: 1, dataDir: directory + "/one", masterKey: key)
    _ = try ClusterTLS.load(.development, id: 2, dataDir: directory + "/two", masterKey: key)
    let one = try String(contentsOfFile: directory + "/one/dev-cluster-tls/ca.crt", encoding: .utf8)
    let two = try String(contentsOfFile: directory + "/two/dev-cluster-tls/ca.crt", encoding: .utf8)
    // The signature is randomized (ECDSA); the key and subject are what peers check.
    #expect(one.hasPrefix("-----BEGIN CERTIFICATE-----") && two.hasPrefix("-----BEGIN CERTIFICATE-----"))
    let attributes = try FileManager.default.attributesOfItem(
      atPath: directory + "/one/dev-cluster-tls/node.key")
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
  }
}
