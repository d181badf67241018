/// Every shopper page, rendered once when the config is loaded: one byte array per language and page,
/// so answering a request is an index, never a template or a disk read.
///
/// The pages come from one template (`Public/page.html`) and one message table per language
/// (`Public/messages/<lang>.json`). An operator's brand name and support link go into every page; an
/// operator's own page (`<overrides>/<lang>/<page>.html`, or `<lang>/400.html` for every 400 family)
/// replaces the rendered one as it is.
public struct PageCatalog: Sendable {
    private let pages: [[UInt8]]

    public func page(_ kind: PageKind, language: Int) -> [UInt8] {
        pages[language * PageKind.allCases.count + kind.index]
    }

    /// What a page is made of, for tests: the heading of `kind` in `language`, as written in its table.
    public let headings: [[String]]

    public func heading(_ kind: PageKind, language: Int) -> String { headings[language][kind.index] }

    /// - Parameters:
    ///   - template: `page.html`, with `{{lang}}`, `{{title}}`, `{{brand}}`, `{{heading}}`, `{{text}}` and
    ///     `{{support}}` where the page's parts go.
    ///   - messages: a language's table (`messages/<lang>.json`) by code; every language must have one.
    ///   - overrides: an operator's pages by `<lang>/<page>` (`nl/404`, `de/400-expired-token`, `fr/400`).
    public static func render(
        template: String, messages: (String) -> [UInt8]?, settings: PageSettings = PageSettings(),
        overrides: [String: [UInt8]] = [:]
    ) -> Result<PageCatalog, PageCatalogError> {
        for key in overrides.keys.sorted() {
            let parts = key.split(separator: "/")
            let names = PageKind.allCases.map(\.rawValue) + ["400"]
            guard parts.count == 2, ShopperLanguage.codes.contains(String(parts[0])), names.contains(String(parts[1])) else {
                return .failure(
                    PageCatalogError(
                        file: key + ".html",
                        problem:
                            "is not a page linkout serves: use <lang>/<page>.html with lang one of \(ShopperLanguage.codes.joined(separator: " ")) and page one of \(names.joined(separator: " "))"
                    ))
            }
        }
        for placeholder in ["{{lang}}", "{{heading}}", "{{text}}"] where !template.contains(placeholder) {
            return .failure(PageCatalogError(file: "page.html", problem: "has no \(placeholder)"))
        }
        let brand = settings.brandName.map { "<p class=\"brand\">\(escape($0))</p>\n" } ?? ""
        var pages: [[UInt8]] = []
        var headings: [[String]] = []
        for code in ShopperLanguage.codes {
            let file = "messages/\(code).json"
            guard let bytes = messages(code) else { return .failure(PageCatalogError(file: file, problem: "is missing")) }
            let table: MessageTable
            switch MessageTable.parse(bytes) {
            case .success(let parsed): table = parsed
            case .failure(let problem): return .failure(PageCatalogError(file: file, problem: problem.text))
            }
            let support = settings.supportURL.map { "<p><a href=\"\(escape($0))\">\(escape(table.support))</a></p>\n" } ?? ""
            var languageHeadings: [String] = []
            for kind in PageKind.allCases {
                let lines = table.pages[kind]!
                languageHeadings.append(lines[0])
                if let own = overrides["\(code)/\(kind.rawValue)"] ?? (kind.status == 400 ? overrides["\(code)/400"] : nil) {
                    pages.append(own)
                    continue
                }
                let title = settings.brandName.map { "\(lines[0]) · \($0)" } ?? lines[0]
                let text = lines.dropFirst().map { "<p>\(escape($0))</p>\n" }.joined()
                let html = fill(
                    template,
                    [
                        "lang": code, "title": escape(title), "brand": brand, "heading": escape(lines[0]), "text": text,
                        "support": support,
                    ])
                pages.append(Array(html.utf8))
            }
            headings.append(languageHeadings)
        }
        return .success(PageCatalog(pages: pages, headings: headings))
    }

    /// The template with each `{{name}}` replaced by its value; unknown names are left as written.
    static func fill(_ template: String, _ values: [String: String]) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstRange(of: "{{") {
            out += rest[..<open.lowerBound]
            let after = rest[open.upperBound...]
            guard let close = after.firstRange(of: "}}") else { break }
            let name = String(after[..<close.lowerBound])
            if let value = values[name] {
                out += value
                rest = after[close.upperBound...]
            } else {
                out += "{{"
                rest = after
            }
        }
        return out + rest
    }

    /// HTML text and attribute escaping: the tables and settings are the operator's, but a stray `<` or
    /// `"` must not break a page.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}

/// A page that cannot be built: the file (relative to the pages folder) and what is wrong with it.
public struct PageCatalogError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var problem: String
    public var description: String { "\(file) \(problem)" }
}

/// One language's `messages/<lang>.json`: the language's own name, the support link's text, and per page
/// its heading followed by one or more paragraphs.
struct MessageTable {
    struct Problem: Error { var text: String }
    var language: String
    var support: String
    var pages: [PageKind: [String]]

    static func parse(_ bytes: [UInt8]) -> Result<MessageTable, Problem> {
        guard let document = try? JSONValue.parse(bytes), case .object(let members) = document else {
            return .failure(Problem(text: "is not a JSON object"))
        }
        var table = MessageTable(language: "", support: "", pages: [:])
        var strings: [String: String] = [:]
        for member in members {
            if let kind = PageKind(rawValue: member.key) {
                guard case .array(let items) = member.value, items.count >= 2 else {
                    return .failure(Problem(text: "\(member.key): must be an array of a heading and at least one paragraph"))
                }
                var lines: [String] = []
                for item in items {
                    guard case .string(let line) = item, !line.isEmpty else {
                        return .failure(Problem(text: "\(member.key): must hold non-empty strings only"))
                    }
                    lines.append(line)
                }
                table.pages[kind] = lines
            } else if member.key == "language" || member.key == "support" {
                guard case .string(let text) = member.value, !text.isEmpty else {
                    return .failure(Problem(text: "\(member.key): must be a non-empty string"))
                }
                strings[member.key] = text
            } else {
                return .failure(Problem(text: "\(member.key): unknown key"))
            }
        }
        for kind in PageKind.allCases where table.pages[kind] == nil { return .failure(Problem(text: "has no \(kind.rawValue)")) }
        guard let language = strings["language"], let support = strings["support"] else {
            return .failure(Problem(text: "needs language and support"))
        }
        table.language = language
        table.support = support
        return .success(table)
    }
}
