/// Plain column-aligned tables for list output.
enum Table {
  static func render(headers: [String], rows: [[String]]) -> String {
    var widths = headers.map(\.count)
    for row in rows {
      for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
    }
    func line(_ cells: [String]) -> String {
      cells.enumerated().map { i, cell in
        i == cells.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
      }.joined(separator: "  ")
    }
    return ([line(headers)] + rows.map(line)).joined(separator: "\n")
  }
}
