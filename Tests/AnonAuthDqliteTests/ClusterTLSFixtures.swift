import AnonAuthCrypto
import Foundation
import Glibc
import Synchronization

@testable import AnonAuthDqlite

/// Certificates on disk for the cluster TLS tests: a CA and node certificates it signs.
struct TestAuthority {
  let directory: String
  let authority: ClusterCertificates.Identity
  let caFile: String

  init(_ name: String, directory: String, development masterKey: [UInt8]? = nil) throws {
    self.directory = directory
    authority =
      if let masterKey {
        try ClusterCertificates.developmentAuthority(masterKey: masterKey)
      } else {
        try ClusterCertificates.authority(
          commonName: name, notBefore: Date().addingTimeInterval(-3600),
          notAfter: Date().addingTimeInterval(86_400))
      }
    caFile = "\(directory)/\(name)-ca.crt"
    try authority.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
  }

  /// (certificate file, key file) of a node certificate; `expired` ended yesterday.
  func node(_ name: String, expired: Bool = false) throws -> (String, String) {
    let now = Date()
    let identity = try ClusterCertificates.node(
      commonName: name, authority: authority,
      notBefore: now.addingTimeInterval(expired ? -10 * 86_400 : -3600),
      notAfter: now.addingTimeInterval(expired ? -86_400 : 86_400))
    let certificate = "\(directory)/\(name).crt"
    let key = "\(directory)/\(name).key"
    try identity.certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
    try identity.privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
    return (certificate, key)
  }

  /// A context that trusts `trusting`'s CA file and presents node `name` of this CA.
  func context(_ name: String, trusting: TestAuthority? = nil, expired: Bool = false) throws
    -> ClusterTLSContext
  {
    let (certificate, key) = try node(name, expired: expired)
    return try ClusterTLSContext(
      caFile: (trusting ?? self).caFile, certificateFile: certificate, keyFile: key)
  }
}

/// Stands in for a dqlite node behind the gateway: an abstract socket that echoes what
/// it receives and counts the connections and bytes that reached it.
final class EchoNode: Sendable {
  let name = "@anonauth-test-\(UUID().uuidString)"
  let connections = Atomic<Int>(0)
  let bytes = Atomic<Int>(0)
  private let listener: Int32

  init() throws {
    listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let path = Array(name.utf8.dropFirst())
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in path.enumerated() { raw[index + 1] = byte }
    }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + path.count)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
    }
    guard bound == 0, listen(listener, 16) == 0 else { throw DqliteError.io("echo node bind") }
    let thread = Thread { [self] in
      while true {
        let fd = accept(listener, nil, nil)
        if fd < 0 { return }
        connections.add(1, ordering: .relaxed)
        let echo = Thread { [self] in
          var buffer = [UInt8](repeating: 0, count: 16_384)
          while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes.add(n, ordering: .relaxed)
            var sent = 0
            while sent < n {
              let m = buffer.withUnsafeBytes {
                send(fd, $0.baseAddress.map { $0 + sent }, n - sent, Int32(MSG_NOSIGNAL))
              }
              if m <= 0 { break }
              sent += m
            }
          }
          close(fd)
        }
        echo.start()
      }
    }
    thread.start()
  }

  deinit {
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
  }
}

enum TestSockets {
  /// Sends `bytes` from another thread while reading as many back, as an echo returns
  /// them: what the reader gets, or fewer bytes when the connection ends first.
  static func roundTrip(_ fd: Int32, _ bytes: [UInt8]) -> [UInt8] {
    let writer = Thread {
      var sent = 0
      while sent < bytes.count {
        let n = bytes.withUnsafeBytes {
          send(fd, $0.baseAddress.map { $0 + sent }, bytes.count - sent, Int32(MSG_NOSIGNAL))
        }
        if n <= 0 { return }
        sent += n
      }
    }
    writer.start()
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while received.count < bytes.count {
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n <= 0 { break }
      received += buffer[0..<n]
    }
    return received
  }

  static func tcp(_ port: Int) throws -> Int32 {
    try DqliteSocket.tcpDescriptor(to: "127.0.0.1:\(port)", timeoutMs: 5_000)
  }
}
