import Foundation

/// Where the test bundles find the built programs they start, so that every suite runs the
/// same binary whatever `--scratch-path` or `ANONAUTHD` chose.
public enum TestBinaries {
  /// `ANONAUTHD`, else the `anonauthd` beside the test bundle (the same build folder,
  /// whatever `--scratch-path` was), else `.build/debug`.
  public static var anonauthd: String {
    if let path = ProcessInfo.processInfo.environment["ANONAUTHD"] { return path }
    let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    let sibling = running.deletingLastPathComponent().appendingPathComponent("anonauthd").path
    if FileManager.default.isExecutableFile(atPath: sibling) { return sibling }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/anonauthd").path
  }
}
