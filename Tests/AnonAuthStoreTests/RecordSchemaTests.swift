import Testing

@testable import AnonAuthStore

/// Every record's declared columns (`TableDefinition`) against the schema the migrations
/// make: a column declared but not in the table, declared with another type or
/// nullability, a key that is not the table's, a column the table requires (NOT NULL, no
/// default) that no declaration binds, or a property of the record no column stores
/// fails here rather than in a query at run time.
@Suite("Records against the schema")
struct RecordSchemaTests {
  /// One table's declaration, without its record type.
  struct Declared: Sendable, CustomTestStringConvertible {
    let table: String
    let key: [String]
    let owner: [String]
    let columns: [(name: String, type: ColumnType, nullable: Bool)]
    /// The record's stored properties, each of which a column must store.
    let properties: [String]

    init<Record>(_ definition: TableDefinition<Record>) {
      table = definition.name
      key = definition.key
      owner = definition.owner
      columns = definition.columns.map { ($0.name, $0.type, $0.isNullable) }
      properties = Mirror(reflecting: definition.blank).children.compactMap(\.label)
    }

    var testDescription: String { table }
  }

  static let records: [Declared] = [
    Declared(AccountRecord.table), Declared(IdentityRecord.table), Declared(ProjectRecord.table),
    Declared(RefreshSessionRecord.table), Declared(SigningKeyRecord.table), Declared(OobCodeRecord.table),
    Declared(OutboxMail.table),
  ]

  /// `PRAGMA table_info`'s row for one column.
  struct SchemaColumn {
    let type: String
    let notNull: Bool
    let hasDefault: Bool
    let primaryKeyPosition: Int64
  }

  @Test("each record's columns are its table's, after every migration", arguments: records)
  func matchesSchema(_ declared: Declared) async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let table = declared.table
      let schema = try await store.read { db in
        try db.query(
          "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", [.text(table)]
        )
        .reduce(into: [String: SchemaColumn]()) { columns, row in
          columns[try row.string(0)] = SchemaColumn(
            type: try row.string(1), notNull: try row.bool(2), hasDefault: !(try row.isNull(3)),
            primaryKeyPosition: try row.int64(4))
        }
      }
      try #require(!schema.isEmpty, "no table \(table)")

      for column in declared.columns {
        guard let found = schema[column.name] else {
          Issue.record("\(table).\(column.name) is declared but not in the schema")
          continue
        }
        #expect(found.type == column.type.rawValue, "\(table).\(column.name): \(found.type) in the schema")
        // A primary key's column of a WITHOUT ROWID table is NOT NULL whatever it says.
        let schemaNullable = !found.notNull && found.primaryKeyPosition == 0
        #expect(schemaNullable == column.nullable, "\(table).\(column.name): nullability differs")
      }
      for name in declared.owner {
        #expect(schema[name] != nil, "\(table).\(name) (the owner's) is not in the schema")
      }
      let primaryKey = schema.filter { $0.value.primaryKeyPosition > 0 }
        .sorted { $0.value.primaryKeyPosition < $1.value.primaryKeyPosition }.map(\.key)
      #expect(primaryKey == declared.key, "\(table)'s primary key")

      // A column an INSERT must give (NOT NULL without a default) is declared or the
      // owner's; an INTEGER PRIMARY KEY alone is SQLite's rowid and needs none.
      let declaredNames = Set(declared.columns.map(\.name) + declared.owner)
      for (name, column) in schema where column.notNull && !column.hasDefault {
        #expect(declaredNames.contains(name), "\(table).\(name) is required but no declaration binds it")
      }
      #expect(
        declared.properties.count == declared.columns.count,
        "\(table): the record has \(declared.properties) but declares \(declared.columns.map(\.name))")
    }
  }
}
