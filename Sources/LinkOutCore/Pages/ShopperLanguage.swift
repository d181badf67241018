/// The languages the shopper pages come in, and which one a request gets: the storefronts linkout serves
/// are the EU's (its 24 official languages) plus Iceland, Norway and Russia.
public enum ShopperLanguage {
    /// BCP 47 primary subtags, sorted: a language's position here is its index in a `PageCatalog`.
    /// Norwegian is `no` (Bokmål text); `nb` and `nn` in `Accept-Language` choose it.
    public static let codes = [
        "bg", "cs", "da", "de", "el", "en", "es", "et", "fi", "fr", "ga", "hr", "hu", "is", "it", "lt", "lv", "mt",
        "nl", "no", "pl", "pt", "ro", "ru", "sk", "sl", "sv",
    ]
    public static let english = codes.firstIndex(of: "en")!

    private static let indexByCode: [String: Int] = {
        var table: [String: Int] = [:]
        for (index, code) in codes.enumerated() { table[code] = index }
        table["nb"] = table["no"]
        table["nn"] = table["no"]
        return table
    }()

    /// The language of each storefront country (lowercase ISO 3166-1 alpha-2) where one language is
    /// what most shoppers read; countries with several (Belgium, Luxembourg) get the most widely read.
    private static let languageByCountry: [String: String] = [
        "at": "de", "be": "nl", "bg": "bg", "cy": "el", "cz": "cs", "de": "de", "dk": "da", "ee": "et", "es": "es",
        "fi": "fi", "fr": "fr", "gr": "el", "hr": "hr", "hu": "hu", "ie": "en", "is": "is", "it": "it", "li": "de",
        "lt": "lt", "lu": "fr", "lv": "lv", "mt": "mt", "nl": "nl", "no": "no", "pl": "pl", "pt": "pt", "ro": "ro",
        "ru": "ru", "se": "sv", "si": "sl", "sk": "sk",
    ]

    /// The index of `code` (`nb`/`nn` are Norwegian), or nil for a language linkout has no pages in.
    public static func index(of code: String) -> Int? { indexByCode[code] }

    /// The page language for a request: the browser's most preferred language among ours, else the link's
    /// country's, else English.
    public static func choose(acceptLanguage: String?, country: String?) -> Int {
        if let acceptLanguage, let index = preferred(acceptLanguage: acceptLanguage) { return index }
        if let country, let index = forCountry(country) { return index }
        return english
    }

    /// The language of a storefront country, if linkout has pages in it.
    public static func forCountry(_ country: String) -> Int? {
        languageByCountry[country.lowercased()].flatMap { indexByCode[$0] }
    }

    /// The highest-weighted language of an `Accept-Language` value that linkout has pages in
    /// (RFC 9110 §12.5.4): `q` from 0 to 1, default 1, equal weights in the order given; `q=0` and
    /// malformed entries never match; `*` is not a choice (the country decides then). Regions are
    /// ignored: `nl-BE` is Dutch. Reads at most 32 entries, so a hostile header costs little.
    public static func preferred(acceptLanguage: String) -> Int? {
        var best: (index: Int, q: Double)?
        for (count, entry) in acceptLanguage.split(separator: ",", omittingEmptySubsequences: true).enumerated() {
            if count >= 32 { break }
            let parts = entry.split(separator: ";", omittingEmptySubsequences: false)
            let tag = parts[0].trimmingSpaces.lowercased()
            var q = 1.0
            var valid = true
            for parameter in parts.dropFirst() {
                let pair = parameter.trimmingSpaces
                guard pair.hasPrefix("q=") || pair.hasPrefix("Q="), let value = Double(pair.dropFirst(2)), (0...1).contains(value)
                else {
                    valid = false
                    break
                }
                q = value
            }
            guard valid, q > 0 else { continue }
            let primary = tag.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? tag
            guard let index = indexByCode[primary] else { continue }
            if best == nil || q > best!.q { best = (index, q) }
        }
        return best?.index
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
