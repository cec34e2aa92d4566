@_spi(Fuzzing) import AnonAuthServer

/// The HTTP/1.1 transport's request parser. The first byte sizes the pieces the rest is
/// fed in (as socket reads cut it), the second the body limit. The requests and the
/// error must be the same whatever the cut; a body never exceeds the limit, a head
/// never has more than `HTTPLimits.maxHeaderCount` fields, and a failed parser holds
/// nothing.
enum HTTPRequestFuzz {
  struct Outcome: Equatable {
    var requests: [String] = []
    var error: HTTPTransportError?
  }

  static func run(_ data: [UInt8]) {
    guard data.count >= 2 else { return }
    let step = Int(data[0]) + 1
    let limit = Int(data[1]) * 64
    let input = Array(data.dropFirst(2))
    let whole = parse(input, step: max(1, input.count), limit: limit)
    let pieces = parse(input, step: step, limit: limit)
    precondition(whole == pieces, "the parse depends on how the bytes were cut")
  }

  static func parse(_ input: [UInt8], step: Int, limit: Int) -> Outcome {
    var parser = HTTPRequestParser()
    var outcome = Outcome()
    var index = 0
    repeat {
      let end = min(input.count, index + step)
      parser.append(input[index..<end])
      index = end
      do throws(HTTPTransportError) {
        loop: while true {
          switch try parser.next() {
          case .needMore:
            break loop
          case .head:
            try parser.admitBody(limit: limit)
          case .request(let request, let framing):
            precondition(request.body.count == framing.contentLength && request.body.count <= limit)
            precondition(request.headers.count <= HTTPLimits.maxHeaderCount)
            outcome.requests.append(
              "\(request.method) \(request.path)?\(request.query) \(request.body.count)")
          }
        }
      } catch {
        precondition(parser.bufferedBytes == 0, "a failed parser still holds bytes")
        outcome.error = error
        return outcome
      }
    } while index < input.count
    return outcome
  }
}
