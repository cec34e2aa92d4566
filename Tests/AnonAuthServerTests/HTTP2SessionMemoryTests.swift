import Testing

@testable import AnonAuthServer

#if canImport(Glibc)
  import Glibc
#endif

/// The sessions' allocator: blocks from the heap and (large ones) from pages of their
/// own, each with its size in front so free and realloc know which.
@Suite struct HTTP2SessionMemoryTests {
  private var pageSize: Int { Int(sysconf(Int32(_SC_PAGESIZE))) }

  /// The outbound frame buffer's size: on pages of its own, so untouched pages are not
  /// resident (the block starts right after its header, at a page boundary + 16).
  @Test func largeBlocksAreMappedPages() throws {
    let block = try #require(HTTP2SessionMemory.allocate(16 * 1024 + 10))
    #expect((Int(bitPattern: block) - HTTP2SessionMemory.headerBytes) % pageSize == 0)
    block.storeBytes(of: 0xAB, toByteOffset: 16 * 1024 + 9, as: UInt8.self)
    HTTP2SessionMemory.release(block)
  }

  @Test func callocIsZeroedOnBothKinds() throws {
    for size in [1, 100, 4096, 20_000] {
      let block = try #require(HTTP2SessionMemory.allocateZeroed(size, 3))
      let bytes = UnsafeRawBufferPointer(start: block, count: size * 3)
      #expect(bytes.allSatisfy { $0 == 0 })
      HTTP2SessionMemory.release(block)
    }
    #expect(HTTP2SessionMemory.allocateZeroed(Int.max, 2) == nil)
  }

  /// Growing across the threshold and back keeps the bytes that fit.
  @Test func reallocKeepsTheBytes() throws {
    var block = try #require(HTTP2SessionMemory.allocate(8))
    block.copyMemory(from: Array("abcdefgh".utf8), byteCount: 8)
    block = try #require(HTTP2SessionMemory.reallocate(block, 40_000))
    #expect(Array(UnsafeRawBufferPointer(start: block, count: 8)) == Array("abcdefgh".utf8))
    block = try #require(HTTP2SessionMemory.reallocate(block, 4))
    #expect(Array(UnsafeRawBufferPointer(start: block, count: 4)) == Array("abcd".utf8))
    HTTP2SessionMemory.release(block)
    HTTP2SessionMemory.release(nil)
    let fresh = try #require(HTTP2SessionMemory.reallocate(nil, 32))
    HTTP2SessionMemory.release(fresh)
  }
}
