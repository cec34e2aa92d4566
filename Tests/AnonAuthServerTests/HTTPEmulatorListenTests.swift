import Foundation
import Testing

@testable import AnonAuthServer

/// `--firebase-emulator-listen` is plain HTTP where `Bearer owner` is the admin key: it
/// must never listen where the network can reach it.
@Suite struct HTTPEmulatorListenTests {
  @Test(arguments: ["0.0.0.0:0", "[::]:9099", "192.168.1.10:9099", "10.0.0.1:0", "[::ffff:127.0.0.1]:0"])
  func anythingButLoopbackIsExitTwoNamingTheFlag(_ address: String) throws {
    let scratch = try Scratch()
    let result = try runDaemon([
      "--dev", "--data-dir", scratch.path + "/data", "--firebase-emulator-listen", address,
    ])
    #expect(result.status == 2)
    #expect(result.stderrLines.count == 1)
    #expect(result.stderr.contains("--firebase-emulator-listen"))
  }

  @Test(arguments: ["127.0.0.1:0", "127.5.6.7:9099", "[::1]:0", "localhost:9099"])
  func loopbackAddressesAreAccepted(_ address: String) throws {
    #expect(try DaemonConfig.emulatorListen(address)?.isLoopback == true)
  }

  @Test func emptyIsOff() throws {
    #expect(try DaemonConfig.emulatorListen("") == nil)
  }
}
