/// What a link's `path` may be. Apple's plist rules forbid a query in the URL, and the path is matched
/// byte for byte against the request, so only plain path characters are allowed.
public enum LinkPathRules {
    /// Paths the gateway answers itself, before any link: a link there would never be reached.
    public static let reserved: Set<String> = Set(BuiltInPath.allCases.map { $0.path.description })

    public static func problem(with path: String) -> String? {
        guard path.hasPrefix("/") else { return "must start with '/'" }
        if path.contains("?") { return "must not contain a query ('?'): Info.plist link URLs cannot carry one" }
        if path.contains("#") { return "must not contain a fragment ('#')" }
        if path.utf8.count > 900 { return "must be at most 900 bytes (a whole plist URL is limited to 1,000)" }
        if path.contains("//") { return "must not contain '//'" }
        if path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) {
            return "must not contain '.' or '..' segments"
        }
        if reserved.contains(path) { return "'\(path)' is reserved: the gateway answers it itself" }
        let allowed = path.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                true
            default: false
            }
        }
        if !allowed { return "must use only letters, digits and '/-_.~' (no spaces, '%' escapes or other characters)" }
        return nil
    }
}
