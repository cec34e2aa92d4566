import AnonAuthNet
import AnonAuthService
import AnonAuthWire
import Testing

@testable import AnonAuthServer

/// The transport, the store and the services get their limits from the one configuration
/// value, and their own defaults are the settings table's.
@Suite struct ConfigSlicesTests {
  @Test func theStoreGetsItsSlice() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: ["--dev", "--commit-delay-us", "2500"], environment: [:])
    let options = config.storeOptions(path: "/srv/anonauth.db")
    #expect(options.commitDelayMicroseconds == 2500)
    #expect(options.writerCacheKiB == config.writerCacheKiB)
    #expect(options.path == "/srv/anonauth.db")
    #expect(!options.checkIntegrityAtOpen)
  }

  @Test func theTransportGetsItsSlice() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: [
        "--dev", "--max-frame-size", "8192", "--max-unauthenticated-frame-size", "2048",
        "--max-buffered-bytes-per-ip", "1048576", "--max-connection-rate-per-ip", "0",
        "--min-call-timeout-ms", "5",
      ], environment: ["ANONAUTH_IO_THREADS": "3"])
    #expect(config.rpc.maxFrameSize == 8192)
    #expect(config.rpc.maxUnauthenticatedFrameSize == 2048)
    #expect(config.rpc.maxBufferedBytesPerIP == 1_048_576)
    #expect(config.rpc.maxConnectionRatePerIP == 0)
    #expect(config.rpc.ioThreads == 3)
    // Where the floor is used: a call asking for 1 ms gets the configured 5.
    #expect(config.rpc.effectiveTimeoutMs(requested: 1) == 5)
  }

  @Test func componentsDefaultToTheTable() throws {
    let rpc = RPCServerConfig(listen: try SocketAddress(parsing: "127.0.0.1:0"))
    let (config, _) = try DaemonConfig.resolve(arguments: ["--dev"], environment: [:])
    #expect(config.rpc.maxFrameSize == rpc.maxFrameSize)
    #expect(config.rpc.maxUnauthenticatedFrameSize == rpc.maxUnauthenticatedFrameSize)
    #expect(config.rpc.maxBufferedBytes == rpc.maxBufferedBytes)
    #expect(config.rpc.maxConnections == rpc.maxConnections)
    #expect(config.rpc.idleTimeoutMs == rpc.idleTimeoutMs)
    #expect(config.rpc.shutdownGraceMs == rpc.shutdownGraceMs)
    #expect(config.admission == AdmissionLimits())
    #expect(config.cleanupIntervalMs == CleanupWorker.defaultIntervalMs)
    #expect(config.cleanupBatchSize == CleanupWorker.defaultBatchSize)
    #expect(config.cleanupJobBudgetMicroseconds == CleanupWorker.defaultJobBudgetMicroseconds)
    // The contract's frame size and deadline: the decoder, the client and the daemon
    // start from them.
    #expect(FrameDecoder().maxFrameSize == config.rpc.maxFrameSize)
    #expect(config.rpc.maxFrameSize == 4 * 1024 * 1024)
    #expect(config.rpc.defaultCallTimeoutMs == UInt64(ProtocolDefaults.callTimeoutMs))
    #expect(config.rpc.defaultCallTimeoutMs == 30_000)
  }
}
