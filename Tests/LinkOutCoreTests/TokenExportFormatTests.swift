import Foundation
import Testing

@testable import LinkOutCore

@Suite("TokenExportFormat")
struct TokenExportFormatTests {
    static func stored(
        id: String = "SANDBOX_3f2504e0-4f89-41d3-9a0c-0305e82c3301", type: String? = "ACQUISITION", expiration: Int64? = 1_706_173_200_000,
        environment: String = "sandbox", link: String = "nl", destination: String = "https://checkout.example.com/nl?a=1&b=2",
        stale: Bool = true
    ) -> StoredToken {
        StoredToken(
            externalPurchaseId: id, appAppleId: 1_234_567_890, bundleId: "com.example",
            tokenCreationDate: 1_706_169_600_000, tokenType: type, tokenExpirationDate: expiration,
            environment: environment, link: link, country: "nl", destination: destination,
            firstSeen: 1_706_169_601_000, lastSeen: 1_706_169_602_000, hits: 3, stale: stale)
    }

    private func parseJSON(_ line: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any])
    }

    @Test("a jsonl line is one JSON object with Apple's camelCase keys and the right values")
    func jsonlLine() throws {
        let line = TokenExportFormat.jsonl.line(Self.stored())
        #expect(!line.contains("\n"))
        let object = try parseJSON(line)
        // experiment and variant appear only for tokens an experiment chose for, path only for unrouted ones,
        // report and reportedAs only from a store with reporting.
        #expect(Set(object.keys) == Set(TokenExportFormat.columns).subtracting(["experiment", "variant", "path", "report", "reportedAs"]))
        #expect(object["externalPurchaseId"] as? String == "SANDBOX_3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        #expect((object["appAppleId"] as? NSNumber)?.int64Value == 1_234_567_890)
        #expect(object["bundleId"] as? String == "com.example")
        #expect((object["tokenCreationDate"] as? NSNumber)?.int64Value == 1_706_169_600_000)
        #expect(object["tokenType"] as? String == "ACQUISITION")
        #expect((object["tokenExpirationDate"] as? NSNumber)?.int64Value == 1_706_173_200_000)
        #expect(object["environment"] as? String == "sandbox")
        #expect(object["link"] as? String == "nl")
        #expect(object["country"] as? String == "nl")
        #expect(object["destination"] as? String == "https://checkout.example.com/nl?a=1&b=2")
        #expect((object["firstSeen"] as? NSNumber)?.int64Value == 1_706_169_601_000)
        #expect((object["lastSeen"] as? NSNumber)?.int64Value == 1_706_169_602_000)
        #expect((object["hits"] as? NSNumber)?.int64Value == 3)
        #expect(object["stale"] as? Bool == true)
    }

    @Test("the jsonl line's exact text")
    func jsonlText() {
        let line = TokenExportFormat.jsonl.line(
            Self.stored(
                id: "3f2504e0-4f89-41d3-9a0c-0305e82c3301", type: nil, expiration: nil,
                environment: "production", stale: false))
        #expect(
            line
                == #"{"externalPurchaseId":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":1706169600000,"environment":"production","link":"nl","country":"nl","destination":"https://checkout.example.com/nl?a=1&b=2","firstSeen":1706169601000,"lastSeen":1706169602000,"hits":3,"stale":false,"otherVisits":0}"#
        )
    }

    @Test("a link-out token has no tokenType or tokenExpirationDate key")
    func jsonlWithoutCustomFields() throws {
        let object = try parseJSON(TokenExportFormat.jsonl.line(Self.stored(type: nil, expiration: nil, stale: false)))
        #expect(object["tokenType"] == nil)
        #expect(object["tokenExpirationDate"] == nil)
        #expect(object["stale"] as? Bool == false)
        #expect(object.count == TokenExportFormat.columns.count - 7)
    }

    @Test("strings with quotes, backslashes and control characters stay valid JSON")
    func jsonlEscaping() throws {
        let awkward = "a\"b\\c\nd\re\tf\u{1}g\u{1F}h/é😀"
        let object = try parseJSON(TokenExportFormat.jsonl.line(Self.stored(link: awkward, destination: awkward)))
        #expect(object["link"] as? String == awkward)
        #expect(object["destination"] as? String == awkward)
    }

    @Test("an experiment's token carries its experiment and variant, and other visits count apart from hits")
    func experimentFields() throws {
        var token = Self.stored()
        token.otherVisits = 2
        token.experiment = "price-test"
        token.variant = "annual-first"
        let object = try parseJSON(TokenExportFormat.jsonl.line(token))
        #expect((object["otherVisits"] as? NSNumber)?.int64Value == 2)
        #expect(object["experiment"] as? String == "price-test")
        #expect(object["variant"] as? String == "annual-first")
        #expect(TokenExportFormat.csv.line(token).hasSuffix(",3,true,2,price-test,annual-first,,,"))
    }

    @Test("jsonl has no header; csv's header lists the columns in order")
    func headers() {
        #expect(TokenExportFormat.jsonl.header == nil)
        #expect(
            TokenExportFormat.csv.header
                == "externalPurchaseId,appAppleId,bundleId,tokenCreationDate,tokenType,tokenExpirationDate,environment,link,country,destination,firstSeen,lastSeen,hits,stale,otherVisits,experiment,variant,path,report,reportedAs"
        )
        #expect(TokenExportFormat(rawValue: "jsonl") == .jsonl)
        #expect(TokenExportFormat(rawValue: "csv") == .csv)
        #expect(TokenExportFormat(rawValue: "CSV") == nil)
    }

    @Test("a csv row has one field per column, in the header's order")
    func csvRow() {
        let row = TokenExportFormat.csv.line(Self.stored(destination: "https://checkout.example.com/nl"))
        #expect(
            row
                == "SANDBOX_3f2504e0-4f89-41d3-9a0c-0305e82c3301,1234567890,com.example,1706169600000,ACQUISITION,1706173200000,sandbox,nl,nl,https://checkout.example.com/nl,1706169601000,1706169602000,3,true,0,,,,,"
        )
        #expect(row.split(separator: ",", omittingEmptySubsequences: false).count == TokenExportFormat.columns.count)
    }

    @Test("absent optional fields are empty csv fields")
    func csvEmptyFields() {
        let row = TokenExportFormat.csv.line(
            Self.stored(
                id: "3f2504e0-4f89-41d3-9a0c-0305e82c3301", type: nil, expiration: nil,
                environment: "production", destination: "https://x.example/", stale: false))
        #expect(
            row
                == "3f2504e0-4f89-41d3-9a0c-0305e82c3301,1234567890,com.example,1706169600000,,,production,nl,nl,https://x.example/,1706169601000,1706169602000,3,false,0,,,,,"
        )
    }

    @Test("csv quotes fields with commas and quotes (RFC 4180)")
    func csvQuoting() {
        let comma = TokenExportFormat.csv.line(Self.stored(destination: "https://x.example/a,b"))
        #expect(comma.contains(",\"https://x.example/a,b\","))
        let quote = TokenExportFormat.csv.line(Self.stored(link: "say \"hi\""))
        #expect(quote.contains(",\"say \"\"hi\"\"\","))
        let onlyQuote = TokenExportFormat.csv.line(Self.stored(link: "\""))
        #expect(onlyQuote.contains(",\"\"\"\","))
        let newline = TokenExportFormat.csv.line(Self.stored(link: "a\nb"))
        #expect(newline.contains(",\"a\nb\","))
        let carriageReturn = TokenExportFormat.csv.line(Self.stored(link: "a\rb"))
        #expect(carriageReturn.contains(",\"a\rb\","))
        // An ampersand, '=' or '?' needs no quoting.
        let plain = TokenExportFormat.csv.line(Self.stored(destination: "https://x.example/?a=1&b=2"))
        #expect(plain.contains(",https://x.example/?a=1&b=2,"))
    }

    @Test("csv quotes a field holding CR LF")
    func csvQuotesCRLF() {
        // In Swift "\r\n" is one Character, equal neither to "\r" nor to "\n".
        let row = TokenExportFormat.csv.line(Self.stored(link: "a\r\nb"))
        #expect(row.contains(",\"a\r\nb\","), "\(row.debugDescription)")
    }
}
