/// The fuzz target's way into the standard services' decoders (`anonauth-fuzz
/// grpc-standard`): any client reaches them with no credential, so hostile bytes must
/// end in an answer or a refusal, never a trap.
@_spi(Fuzzing) public enum GRPCStandardFuzzing {
  static let reflection = GRPCReflection(
    package: "grpc.reflection.v1", services: GRPCDescriptorPool.embedded.services)

  /// Feeds `data` to reflection twice on one stream (the second time, its files count as
  /// already sent) and to the health request decoder. An answer always echoes the
  /// request whole.
  public static func run(_ data: [UInt8]) {
    var sent: Set<String> = []
    for _ in 0..<2 {
      guard let answer = reflection.answer(data, sent: &sent) else { break }
      var reader = GRPCProtoReader(answer)
      var echoed: [UInt8]?
      while let (number, value) = try? reader.next() {
        if number == 2 { echoed = value.slice.map(Array.init) }
      }
      precondition(echoed == data, "a reflection answer must echo its request")
    }
    _ = GRPCHealthMessages.service(in: data)
  }
}
