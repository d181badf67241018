import Foundation
import LinkOutCore
import LinkOutTestSupport

/// The shopper pages as the package's `Public/` renders them: what a server on `TestConfig.json` sends.
enum ShopperPages {
    static func catalog(_ settings: PageSettings = PageSettings()) throws -> PageCatalog {
        let folder = LinkoutBinary.packageRoot.appendingPathComponent("Public")
        let template = try String(contentsOf: folder.appendingPathComponent("page.html"), encoding: .utf8)
        return try PageCatalog.render(
            template: template,
            messages: {
                FileManager.default.contents(atPath: folder.appendingPathComponent("messages/\($0).json").path).map { [UInt8]($0) }
            },
            settings: settings
        ).get()
    }
}
