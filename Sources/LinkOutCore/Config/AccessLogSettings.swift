/// Where the access log goes and how much of a client address it keeps.
public struct AccessLogSettings: Sendable, Equatable {
    public enum Destination: Sendable, Equatable {
        case off
        case standardOutput
        case standardError
        case file(String)
    }

    public var destination: Destination
    public var clients: ClientAddressPolicy

    public init(destination: Destination = .standardOutput, clients: ClientAddressPolicy = .defaults) {
        self.destination = destination
        self.clients = clients
    }
}
