/// The reference pages generated from the code: `anonauthd --print-reference <page>`
/// prints one, `make reference-docs` writes them under docs/, and
/// `make check-reference-docs` (in `make test`) fails when a committed page differs.
public enum ReferencePages {
  /// The pages by name, with the file each is committed as.
  public static let pages: [(name: String, path: String, render: @Sendable () -> String)] = [
    ("configuration", "docs/configuration.md", ConfigReference.markdown),
    ("reasons", "docs/reasons.md", ReasonsPage.render),
    ("metrics", "docs/metrics.md", MetricsPage.render),
  ]

  /// The page named `name`, or nil.
  public static func render(_ name: String) -> String? {
    pages.first { $0.name == name }?.render()
  }

  /// The first lines of a generated page: where it comes from and how to regenerate it,
  /// so nobody edits it by hand.
  static func banner(source: String, command: String) -> String {
    """
    <!-- Generated from \(source) by `anonauthd --print-reference \(command)`.
         Do not edit: change the source and run `make reference-docs`. -->


    """
  }
}
