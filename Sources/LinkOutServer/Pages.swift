import Foundation

/// The HTML a shopper sees when there is no redirect, read once at start from the `Public/` folder so a
/// request never touches the disk.
public struct Pages: Sendable {
    /// 400: the token was missing or refused. Tells the shopper to go back to the app and try again.
    public var badToken: [UInt8]
    public var notFound: [UInt8]
    public var methodNotAllowed: [UInt8]
    /// 503: the store could not commit, the gateway is stopping, or it is overloaded.
    public var unavailable: [UInt8]
    /// 429: the client is over the rate limit.
    public var tooManyRequests: [UInt8]

    public static let fileNames = ["400.html", "404.html", "405.html", "503.html", "429.html"]

    /// Reads the pages from `directory`; every one must be there, so a typo in `publicDir` fails at start
    /// instead of showing shoppers an empty page.
    public static func load(from directory: String) throws -> Pages {
        var contents: [[UInt8]] = []
        for name in fileNames {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw PagesError(path: path)
            }
            contents.append([UInt8](data))
        }
        return Pages(
            badToken: contents[0], notFound: contents[1], methodNotAllowed: contents[2], unavailable: contents[3],
            tooManyRequests: contents[4])
    }

    /// Plain pages for a config with no `publicDir`.
    public static let builtIn = Pages(
        badToken: page("This link could not be opened", "Please go back to the app and tap the link again."),
        notFound: page("Page not found", "There is nothing at this address."),
        methodNotAllowed: page("Not allowed", "This address only answers GET and HEAD requests."),
        unavailable: page("Please try again", "This service is busy for a moment. Please go back to the app and try again."),
        tooManyRequests: page("Too many requests", "This link was opened too many times in a short while. Please wait a moment, then go back to the app and try again."))

    private static func page(_ title: String, _ text: String) -> [UInt8] {
        Array("""
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title)</title></head><body><h1>\(title)</h1><p>\(text)</p></body></html>

            """.utf8)
    }
}

public struct PagesError: Error, CustomStringConvertible {
    public var path: String
    public var description: String { "cannot read page \(path) (check publicDir in the config)" }
}
