import AnonAuthCrypto
import Testing

/// JSON from clients (a JWT's header and claims) nested without end: refused, never a
/// stack overflow.
@Suite struct JSONDepthTests {
  @Test(arguments: [10_000, 200_000])
  func deeplyNestedArraysAreRefused(depth: Int) {
    let bytes =
      [UInt8](repeating: UInt8(ascii: "["), count: depth)
      + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
    #expect(JSONValue(jsonBytes: bytes) == nil)
  }

  @Test func deeplyNestedObjectsAreRefused() {
    let depth = 100_000
    let bytes =
      Array(String(repeating: "{\"a\":", count: depth).utf8) + [UInt8(ascii: "1")]
      + [UInt8](repeating: UInt8(ascii: "}"), count: depth)
    #expect(JSONValue(jsonBytes: bytes) == nil)
  }

  @Test func ordinaryNestingStillParses() {
    let bytes = Array("{\"a\":[[[{\"b\":1}]]]}".utf8)
    #expect(JSONValue(jsonBytes: bytes) != nil)
  }
}
