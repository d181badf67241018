import Foundation
import LinkOutCore

/// The HTML a shopper sees when there is no redirect, in each language linkout serves: rendered once at
/// start (and on a reload) from `publicDir`, or from the copy of `Public/` built into the binary, so a
/// request never touches the disk.
package struct Pages: Sendable {
    package var catalog: PageCatalog

    package func page(_ kind: PageKind, language: Int) -> [UInt8] { catalog.page(kind, language: language) }

    /// The pages a config asks for: its `publicDir` (or the built-in copy), with its `pages` settings and
    /// overrides. Every file must be there and well formed, so a typo fails at start instead of showing
    /// shoppers an empty page. Errors name the config key to look at.
    package static func load(_ config: GatewayConfig) throws -> Pages {
        let template: String
        let messages: (String) -> [UInt8]?
        if let directory = config.publicDirectory {
            let path = (directory as NSString).appendingPathComponent("page.html")
            guard let data = FileManager.default.contents(atPath: path) else {
                throw PagesError(key: "publicDir", message: "cannot read page \(path)")
            }
            template = String(decoding: data, as: UTF8.self)
            messages = { code in
                FileManager.default.contents(atPath: (directory as NSString).appendingPathComponent("messages/\(code).json")).map {
                    [UInt8]($0)
                }
            }
        } else {
            template = BuiltInPages.files["page.html"]!
            messages = { BuiltInPages.files["messages/\($0).json"].map { Array($0.utf8) } }
        }
        var overrides: [String: [UInt8]] = [:]
        if let folder = config.pages.overridesDirectory { overrides = try readOverrides(folder) }
        switch PageCatalog.render(template: template, messages: messages, settings: config.pages, overrides: overrides) {
        case .success(let catalog): return Pages(catalog: catalog)
        case .failure(let error):
            let isOverride = overrides.keys.contains { error.file == $0 + ".html" }
            let folder = isOverride ? config.pages.overridesDirectory! : config.publicDirectory ?? "(built in)"
            throw PagesError(
                key: isOverride ? "pages.overrides" : "publicDir",
                message: "\((folder as NSString).appendingPathComponent(error.file)) \(error.problem)")
        }
    }

    /// The package's own pages, as a config without `publicDir` or `pages` gets them.
    package static let builtIn: Pages = try! load(GatewayConfig(apps: [], links: []))

    /// `<folder>/<lang>/<page>.html`, by `<lang>/<page>`. Anything else in the folder is an error: a
    /// misnamed file would otherwise be silently ignored.
    private static func readOverrides(_ folder: String) throws -> [String: [UInt8]] {
        let files = FileManager.default
        guard let languages = try? files.contentsOfDirectory(atPath: folder) else {
            throw PagesError(key: "pages.overrides", message: "cannot read the folder \(folder)")
        }
        var overrides: [String: [UInt8]] = [:]
        for language in languages.sorted() where !language.hasPrefix(".") {
            let languageFolder = (folder as NSString).appendingPathComponent(language)
            guard let names = try? files.contentsOfDirectory(atPath: languageFolder) else {
                throw PagesError(
                    key: "pages.overrides",
                    message: "\(languageFolder) is not a folder named after a language (\(ShopperLanguage.codes.joined(separator: " ")))")
            }
            for name in names.sorted() where !name.hasPrefix(".") {
                let path = (languageFolder as NSString).appendingPathComponent(name)
                guard name.hasSuffix(".html"), let data = files.contents(atPath: path) else {
                    throw PagesError(key: "pages.overrides", message: "\(path) is not a readable .html page")
                }
                overrides["\(language)/\(name.dropLast(5))"] = [UInt8](data)
            }
        }
        return overrides
    }
}

package struct PagesError: Error, CustomStringConvertible {
    /// The config key whose folder holds the bad file.
    package var key: String
    package var message: String
    package var description: String { "\(key): \(message)" }
}
