/// Builds the `Location` of a redirect from config bytes and validated values only.
///
/// The destination URL was checked at load (absolute https, printable ASCII); the parameters added here
/// are an `externalPurchaseId` that passed `ExternalPurchaseID.isValid` (hex, dashes, `SANDBOX_`) and,
/// when a link forwards it, the token re-encoded as URL-safe base64. Nothing from the request line is
/// copied, so no request can change the scheme, host or path, or smuggle CR/LF into the header.
public enum LocationBuilder {
    public static func location(destination: String, parameters: [(name: String, value: String)]) -> String {
        guard !parameters.isEmpty else { return destination }
        var base = Substring(destination)
        var fragment: Substring = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = base[hash...]
            base = base[..<hash]
        }
        var location = String(base)
        var separator: Character = base.contains("?") ? "&" : "?"
        if base.hasSuffix("?") || base.hasSuffix("&") { separator = "\0" }
        for (name, value) in parameters {
            if separator != "\0" { location.append(separator) }
            location += name
            location += "="
            location += value
            separator = "&"
        }
        location += fragment
        return location
    }
}
