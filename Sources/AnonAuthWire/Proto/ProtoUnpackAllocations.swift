internal import CProtobufC

/// The allocator handed to protobuf-c's `unpack`, recording the size of every block.
///
/// protobuf-c stores a decoded string as a NUL-terminated `char *` and drops its length.
/// It allocates exactly `length + 1` bytes for each string, so the recorded size gives
/// the true length back, and a string with an embedded NUL decodes whole instead of being
/// cut at the NUL (which could make "victim@example.com\0x" read as another address).
/// The record also lets debug builds check that `free_unpacked` released everything.
final class ProtoUnpackAllocations {
  /// What `malloc` guarantees, which is what protobuf-c assumes of its allocator.
  private static let alignment = 16

  private var sizes: [UnsafeMutableRawPointer: Int] = [:]

  var isEmpty: Bool { sizes.isEmpty }

  /// The size protobuf-c asked for when it allocated `pointer`, or nil when protobuf-c
  /// did not allocate it (the static empty string it uses as a default).
  func size(of pointer: UnsafeRawPointer) -> Int? {
    sizes[UnsafeMutableRawPointer(mutating: pointer)]
  }

  /// A `ProtobufCAllocator` that calls back into this object. It holds an unretained
  /// pointer: the caller keeps `self` alive for as long as protobuf-c may use it.
  func makeAllocator() -> ProtobufCAllocator {
    ProtobufCAllocator(
      alloc: { context, size in
        guard let context else { return nil }
        let allocations = Unmanaged<ProtoUnpackAllocations>.fromOpaque(context)
          .takeUnretainedValue()
        let block = UnsafeMutableRawPointer.allocate(
          byteCount: max(size, 1), alignment: ProtoUnpackAllocations.alignment)
        allocations.sizes[block] = size
        return block
      },
      free: { context, pointer in
        guard let context, let pointer else { return }
        let allocations = Unmanaged<ProtoUnpackAllocations>.fromOpaque(context)
          .takeUnretainedValue()
        allocations.sizes[pointer] = nil
        pointer.deallocate()
      },
      allocator_data: Unmanaged.passUnretained(self).toOpaque())
  }
}
