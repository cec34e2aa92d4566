import AnonAuthServer
import AnonAuthStore
import Testing

/// `--writer-cache-bytes`: the store's default, handed to the store in KiB, the range.
@Suite struct ConfigWriterCacheTests {
  @Test func defaultIsTheStoresAndReachesIt() throws {
    let (config, _) = try DaemonConfig.resolve(arguments: ["--dev"], environment: [:])
    #expect(config.writerCacheKiB == StoreOptions.defaultWriterCacheKiB)
    let (set, _) = try DaemonConfig.resolve(
      arguments: ["--dev"], environment: ["ANONAUTH_WRITER_CACHE_BYTES": "33554432"])
    #expect(set.writerCacheKiB == 32_768)
  }

  @Test(arguments: ["2097151", "17179869185", "64MiB"])
  func refused(_ value: String) {
    #expect(configRefusal(["--dev", "--writer-cache-bytes", value]).contains("--writer-cache-bytes"))
  }
}
