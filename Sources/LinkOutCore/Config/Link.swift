/// One gateway URL: what the app's Info.plist lists for a country (or, for a shared link, several
/// countries), and where shoppers go from it.
public struct Link: Sendable, Equatable {
    /// A short stable name: the record's `link`, and the label in logs and metrics.
    public var id: String
    /// The URL path the plist entry points at (`/nl`, `/de/annual`): the only channel that tells the
    /// gateway which link the shopper took, because plist URLs cannot carry a query.
    public var path: String
    /// Lowercase ISO 3166-1 alpha-2, as the plist keys are: the link's country, and for a shared link
    /// the default when the shopper's country is unknown or not one the link serves.
    public var country: String
    /// The default country's destinations, weighted.
    public var destinations: [Destination]
    /// A shared link's other countries, each with its own destinations or the link's.
    public var countries: [CountryDestinations]
    /// Where to send shoppers when every checked destination of their set is down; nil: the least-bad
    /// destination (the one up most recently).
    public var fallback: String?
    public var onInvalidToken: InvalidTokenAction
    /// Whether shoppers arrive with a token: `notExpected` makes a request without one a tap, not a refusal.
    public var token: TokenExpectation
    /// What the Location carries besides the destination's own query.
    public var parameters: CheckoutParameters
    /// A split with named variants that replaces the destinations until its end.
    public var experiment: Experiment?
    /// The bundle id of the app whose links these are (`links[].app`), when the config says: a link that
    /// expects no token has no token to name its app, so its taps are that app's on the monthly statement.
    public var app: String?

    public init(
        id: String, path: String, country: String, destinations: [Destination],
        onInvalidToken: InvalidTokenAction = .reject, forwardToken: Bool = false,
        countries: [CountryDestinations] = [], fallback: String? = nil,
        parameters: CheckoutParameters = CheckoutParameters(), experiment: Experiment? = nil,
        token: TokenExpectation = .required, app: String? = nil
    ) {
        self.app = app
        self.id = id
        self.path = path
        self.country = country
        self.destinations = destinations
        self.onInvalidToken = onInvalidToken
        self.countries = countries
        self.fallback = fallback
        self.parameters = parameters
        self.experiment = experiment
        self.token = token
        if forwardToken { self.parameters.token = true }
    }

    /// Also pass the token itself to the checkout (`parameters.token`; `forwardToken` is its older name).
    public var forwardToken: Bool {
        get { parameters.token }
        set { parameters.token = newValue }
    }

    /// Every country the link serves: its own first.
    public var servedCountries: [String] { [country] + countries.map(\.country) }

    /// Every URL the link can redirect to, each once, in config order (destinations, countries'
    /// destinations, variants, fallback): the metrics' labels, and what a redirect's destination index
    /// points into.
    public var destinationURLs: [String] {
        var seen: Set<String> = []
        var urls: [String] = []
        func add(_ url: String) { if seen.insert(url).inserted { urls.append(url) } }
        destinations.forEach { add($0.url) }
        countries.forEach { $0.destinations?.forEach { add($0.url) } }
        experiment?.variants.forEach { add($0.destination.url) }
        if let fallback { add(fallback) }
        return urls
    }
}

public struct Destination: Sendable, Equatable {
    /// An absolute https URL; it may carry its own query, which the Location keeps.
    public var url: String
    public var weight: Double
    /// How the destination is health-checked; nil: never, and it always counts as up.
    public var health: DestinationHealthCheck?

    public init(url: String, weight: Double = 1, health: DestinationHealthCheck? = nil) {
        self.url = url
        self.weight = weight
        self.health = health
    }
}

public enum DestinationHealthCheck: Sendable, Equatable {
    /// `HEAD` on the destination's origin (`https://host[:port]/`).
    case origin
    /// `GET` on this URL.
    case url(String)
}

/// One more country of a shared link.
public struct CountryDestinations: Sendable, Equatable {
    public var country: String
    /// nil: the link's own destinations.
    public var destinations: [Destination]?

    public init(country: String, destinations: [Destination]? = nil) {
        self.country = country
        self.destinations = destinations
    }
}

/// What a link does with a missing or refused token.
public enum InvalidTokenAction: String, Sendable, Equatable, CaseIterable {
    /// 400 with the "go back to the app" page.
    case reject
    /// 302 to the link's first destination without a token, recorded as an untokened visit.
    case redirect
}
