/// Where records are kept, as `--store` or the config's `store` names it: a `postgres://` or
/// `postgresql://` URL selects PostgreSQL, anything else is the path of a SQLite file.
public enum StoreLocation: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(url: String)

    public init(_ value: String) {
        self = Self.isPostgresURL(value) ? .postgres(url: value) : .sqlite(path: value)
    }

    /// True for the two URI schemes libpq accepts, spelt as libpq wants them (lowercase).
    public static func isPostgresURL(_ value: String) -> Bool {
        value.hasPrefix("postgres://") || value.hasPrefix("postgresql://")
    }

    /// The location as it may be shown in logs and errors: a URL's password is replaced by `***`.
    public var redacted: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let url): Self.redactingPassword(url)
        }
    }

    /// Replaces the password of a `scheme://user:password@host/...` URL, and the value of any
    /// `password=` query parameter, with `***`.
    public static func redactingPassword(_ url: String) -> String {
        let characters = Array(url)
        // Core has no Foundation: find "://" by hand.
        var schemeEnd: Int?
        var index = 0
        while index + 2 < characters.count {
            if characters[index] == ":" && characters[index + 1] == "/" && characters[index + 2] == "/" {
                schemeEnd = index + 3
                break
            }
            index += 1
        }
        guard let schemeEnd else { return url }
        // The user info ends at the last '@' before the query: a password with an unescaped '/' must not
        // end it early and slip through, so the authority is taken to reach that '@' whatever comes between.
        var queryStart = schemeEnd
        while queryStart < characters.count, characters[queryStart] != "?", characters[queryStart] != "#" { queryStart += 1 }
        var authorityEnd = characters[schemeEnd..<queryStart].lastIndex(of: "@") ?? schemeEnd
        while authorityEnd < characters.count, !"/?#".contains(characters[authorityEnd]) { authorityEnd += 1 }
        var result = String(characters[..<schemeEnd])
        let authority = characters[schemeEnd..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            let userInfo = characters[schemeEnd..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                result += String(characters[schemeEnd..<colon])
                result += ":***"
            } else {
                result += String(userInfo)
            }
            result += String(characters[at..<authorityEnd])
        } else {
            result += String(authority)
        }
        let tail = characters[authorityEnd...]
        guard let question = tail.firstIndex(of: "?") else { return result + String(tail) }
        result += String(characters[authorityEnd...question])
        let query = String(characters[(question + 1)...])
        let parameters: [String] = query.split(separator: "&", omittingEmptySubsequences: false).map { parameter in
            parameter.lowercased().hasPrefix("password=") ? "password=***" : String(parameter)
        }
        return result + parameters.joined(separator: "&")
    }
}
