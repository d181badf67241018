import Foundation

/// Configs for a gateway under test: one app (the sample token's) and the given links, pages from the
/// package's Public/.
package enum TestConfig {
    /// `links` is the JSON array of links; `extra` is spliced in as further top-level members.
    package static func json(links: String, extra: String = "") -> String {
        """
        {
          \(extra)
          "publicDir": "\(LinkoutBinary.packageRoot.path)/Public",
          "apps": [{ "bundleId": "com.example", "appAppleId": 1234567890 }],
          "links": \(links)
        }
        """
    }
}
