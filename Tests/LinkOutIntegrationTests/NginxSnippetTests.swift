import Foundation
import LinkOutTestSupport
import Testing

/// docs/operations.md's nginx snippet ("TLS in front") must not log the query: StoreKit puts the whole
/// `externalPurchaseToken` there, and nginx's default access log (`combined`, `$request`) would keep every
/// one. Read from the doc as written, so the check follows the snippet operators copy. (No test runs nginx
/// itself: the test machine need not have it; bench/run does, with bench/nginx-tls.conf.)
@Suite struct NginxSnippetTests {
    /// Variables that hold the query, whole or in part.
    static func queryVariables(in format: String) -> [String] {
        format.matches(of: #/\$\{?([A-Za-z0-9_]+)/#).map { String($0.1) }.filter { name in
            ["request", "request_uri", "args", "query_string"].contains(name) || name.hasPrefix("arg_")
        }
    }

    /// The snippet's directives, each its name and arguments (quotes removed, comments dropped), in order.
    static func directives(_ text: String) -> [[String]] {
        var directives: [[String]] = []
        var words: [String] = []
        var word = ""
        var quote: Character?
        var comment = false
        func endWord() {
            if !word.isEmpty { words.append(word) }
            word = ""
        }
        for character in text {
            if comment {
                if character == "\n" { comment = false }
                continue
            }
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
                continue
            }
            switch character {
            case "'", "\"": quote = character
            case "#":
                endWord()
                comment = true
            case " ", "\t", "\n": endWord()
            case ";", "{", "}":
                endWord()
                if !words.isEmpty { directives.append(words) }
                words = []
            default: word.append(character)
            }
        }
        return directives
    }

    /// Why the snippet's access logging may keep a token, if it may.
    static func problems(_ snippet: String) -> [String] {
        let all = directives(snippet)
        var formats: [String: String] = [:]
        for directive in all where directive.first == "log_format" && directive.count >= 3 {
            formats[directive[1]] = directive.dropFirst(2).joined(separator: " ")
        }
        let accessLogs = all.filter { $0.first == "access_log" }
        if accessLogs.isEmpty { return ["no access_log: nginx's default (combined) logs $request, the query with the token"] }
        var problems: [String] = []
        for directive in accessLogs where directive.dropFirst().first != "off" {
            guard directive.count >= 3, let format = formats[directive[2]] else {
                problems.append("\(directive.joined(separator: " ")): no log_format of the snippet's (combined logs $request)")
                continue
            }
            let query = queryVariables(in: format)
            if !query.isEmpty { problems.append("log_format \(directive[2]) logs \(query.map { "$" + $0 }.joined(separator: ", "))") }
        }
        return problems
    }

    @Test func theDocumentedSnippetLogsNoQuery() throws {
        let blocks = ReadmeTests.blocks(of: try ReadmeTests.text("docs/operations.md"))
        let snippet = try #require(blocks.first { $0.language == "nginx" && $0.headings.contains("### TLS in front") })
        let text = snippet.lines.joined(separator: "\n")
        #expect(Self.problems(text) == [], "\(text)")
        #expect(text.contains("access_log"), "the snippet names its access log")
    }

    /// The check itself refuses what would keep the token.
    @Test func theCheckRefusesAFormatWithTheQuery() {
        #expect(Self.problems("server { location / { proxy_pass http://linkout; } }").count == 1)
        #expect(Self.problems("server { access_log /var/log/nginx/a.log; }").count == 1, "combined")
        #expect(Self.problems("server { access_log /var/log/nginx/a.log combined; }").count == 1)
        for variable in ["$request", "$request_uri", "$args", "$query_string", "$arg_externalPurchaseToken", "${request}"] {
            let snippet = "log_format q '$remote_addr \"\(variable)\" $status';\nserver { access_log /a.log q; }"
            #expect(Self.problems(snippet).count == 1, "\(variable)")
        }
        #expect(
            Self.problems(
                "log_format ok '$request_method $uri $request_time'; # $request\nserver { access_log /a.log ok; access_log off; }") == [])
    }
}
