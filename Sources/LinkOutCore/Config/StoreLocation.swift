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
        // The user info ends at the last '@' before the query: a password with an unescaped '/' must not end
        // it early and slip through.
        guard let parts = URLAuthority(url, userInfoAcrossDelimiters: true) else { return url }
        var result = "\(parts.scheme)://"
        if let userInfo = parts.userInfo {
            result += userInfo.firstIndex(of: ":").map { "\(userInfo[..<$0]):***" } ?? String(userInfo)
            result += "@"
        }
        result += parts.authority[(parts.userInfo.map { parts.authority.index(after: $0.endIndex) } ?? parts.authority.startIndex)...]
        let tail = parts.rest
        guard let question = tail.firstIndex(of: "?") else { return result + tail }
        result += tail[...question]
        let parameters = tail[tail.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter in
            parameter.lowercased().hasPrefix("password=") ? "password=***" : String(parameter)
        }
        return result + parameters.joined(separator: "&")
    }
}
