import Foundation

/// A progress bar on stderr for long operations, drawn only when stderr is a terminal
/// (scripts and CI logs get no control characters).
struct ProgressBar {
  let total: Int
  let label: String
  private let enabled = isatty(2) == 1

  init(total: Int, label: String) {
    self.total = max(total, 1)
    self.label = label
  }

  func update(_ done: Int) {
    guard enabled else { return }
    let width = 30
    let filled = min(width, done * width / total)
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(done)/\(total)".utf8))
  }

  func finish() {
    guard enabled else { return }
    FileHandle.standardError.write(Data("\n".utf8))
  }
}
