import AnonAuthNet

/// Feeds `text` to a parser in pieces of `step` bytes (1: byte by byte), as socket reads
/// would, and finishes at the end: the response parser tests' one way in.
func parseHTTPResponse(_ text: String, step: Int = 1 << 20, maxBody: Int = 1024) throws(HTTPClientError)
  -> HTTPResponse
{
  var parser = HTTPResponseParser(maxHeadBytes: 256, maxBodyBytes: maxBody)
  let bytes = Array(text.utf8)
  var index = 0
  while index < bytes.count && !parser.isComplete {
    try parser.append(bytes[index..<min(index + step, bytes.count)])
    index += step
  }
  return try parser.finish()
}
