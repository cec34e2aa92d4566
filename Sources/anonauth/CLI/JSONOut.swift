import Foundation

/// JSON for `--json` output: compact with sorted keys, or indented for people.
indirect enum JSONOut {
  case string(String)
  case int(Int64)
  case bool(Bool)
  case array([JSONOut])
  case object([String: JSONOut])

  var text: String { render(indent: nil, depth: 0) }
  var pretty: String { render(indent: "  ", depth: 0) }

  private func render(indent: String?, depth: Int) -> String {
    switch self {
    case .string(let s): return SessionCommands.jsonQuote(s)
    case .int(let i): return String(i)
    case .bool(let b): return b ? "true" : "false"
    case .array(let items):
      if items.isEmpty { return "[]" }
      let inner = items.map { $0.render(indent: indent, depth: depth + 1) }
      return wrap("[", inner, "]", indent: indent, depth: depth)
    case .object(let members):
      if members.isEmpty { return "{}" }
      let inner = members.keys.sorted().map { key in
        SessionCommands.jsonQuote(key) + (indent == nil ? ":" : ": ")
          + (members[key]?.render(indent: indent, depth: depth + 1) ?? "null")
      }
      return wrap("{", inner, "}", indent: indent, depth: depth)
    }
  }

  private func wrap(_ open: String, _ inner: [String], _ close: String, indent: String?, depth: Int) -> String
  {
    guard let indent else { return open + inner.joined(separator: ",") + close }
    let pad = String(repeating: indent, count: depth + 1)
    let end = String(repeating: indent, count: depth)
    return open + "\n" + inner.map { pad + $0 }.joined(separator: ",\n") + "\n" + end + close
  }
}
