extension ConfigLoader {
    /// `pages`: `brandName`, `supportURL`, `overrides`.
    static func readPages(_ root: inout ObjectReader, baseDirectory: String, problems: inout [ConfigProblem]) -> PageSettings {
        var settings = PageSettings()
        guard var object = root.object("pages", problems: &problems) else { return settings }
        if let name = object.string("brandName", problems: &problems) {
            if name.isEmpty || name.count > 60 || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                problems.append(object.problem("brandName", "must be 1 to 60 characters, with no control characters"))
            } else {
                settings.brandName = name
            }
        }
        if let url = object.string("supportURL", problems: &problems) {
            let allowed = (url.hasPrefix("https://") && url.count > 8) || (url.hasPrefix("mailto:") && url.count > 7)
            if !allowed || url.count > 512
                || url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || "\"<>\\`".unicodeScalars.contains($0) })
            {
                problems.append(
                    object.problem("supportURL", "must be an https:// or mailto: URL of at most 512 characters, with no spaces or quotes"))
            } else {
                settings.supportURL = url
            }
        }
        if let path = object.string("overrides", problems: &problems) {
            if path.isEmpty {
                problems.append(object.problem("overrides", "must be a folder path"))
            } else {
                settings.overridesDirectory = resolve(path, against: baseDirectory)
            }
        }
        object.reportUnknownKeys(problems: &problems)
        return settings
    }
}
