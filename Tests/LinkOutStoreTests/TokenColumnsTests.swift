import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// The token's columns are declared once (`TokenColumns`) and both stores' exports and PostgreSQL's insert
/// follow that list: a property of `StoredToken` missing from it would be exported as a placeholder.
@Suite struct TokenColumnsTests {
    @Test func everyPropertyOfAStoredTokenHasItsColumn() {
        let sample = TokenMerge(TokenBuilder.record()).token
        let properties = Set(Mirror(reflecting: sample).children.compactMap(\.label))
        // The reporting state comes from report_tokens (`SQLReportingStore.exportColumns`), not the token.
        let fromColumns = properties.subtracting(["report", "reportedAs"])
        #expect(fromColumns.count == TokenColumns.all.count)
        // Each column's name is its property's, in snake case.
        let snake = Set(
            fromColumns.map { name in
                name.reduce(into: "") { out, character in
                    if character.isUppercase { out += "_" + character.lowercased() } else { out.append(character) }
                }
            })
        #expect(snake == Set(TokenColumns.all.map(\.name)))
    }

    @Test func theExportSelectsTheColumnsInOrderThenTheReportingState() {
        #expect(TokenColumns.exportSelect.hasPrefix("t.external_purchase_id, t.app_apple_id, t.bundle_id,"))
        #expect(TokenColumns.exportSelect.hasSuffix(SQLReportingStore.exportColumns))
        #expect(
            TokenColumns.all.map(\.postgresType) == [
                "text", "bigint", "text", "bigint", "text", "bigint", "text", "text", "text", "text", "bigint", "bigint",
                "bigint", "boolean", "bigint", "text", "text", "text",
            ])
    }
}
