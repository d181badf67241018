/// The config's `pages`: what an operator adds to the shopper pages, or replaces in them.
public struct PageSettings: Sendable, Equatable {
    /// Shown above every page's heading and in its title; nil: none.
    public var brandName: String?
    /// An `https:` or `mailto:` link at the foot of every page, worded in the page's language; nil: none.
    public var supportURL: String?
    /// A folder of the operator's own pages, `<lang>/<page>.html`; nil: none.
    public var overridesDirectory: String?

    public init(brandName: String? = nil, supportURL: String? = nil, overridesDirectory: String? = nil) {
        self.brandName = brandName
        self.supportURL = supportURL
        self.overridesDirectory = overridesDirectory
    }
}
