import Foundation
import LinkOutCore

/// The providers' events as `report status` prints them and the dashboard's `/api/reporter` answers them:
/// one place for both.
extension ProviderEventCounts {
    /// The outcomes an event keeps (a duplicate is only counted in the metrics, never kept twice).
    public static let keptOutcomes: [ProviderOutcome] = [.taken, .ignored, .unmatched, .parked, .waiting, .held]

    public var providers: [String] {
        Array(Set(rows.map(\.provider))).sorted()
    }

    public var json: JSONValue { json(ids: { $0 }) }

    /// `ids` shortens the tokens' ids (the dashboard shows 8 characters unless asked for them whole).
    public func json(ids: (String) -> String) -> JSONValue {
        let byProvider = providers.map { provider -> JSONValue.Member in
            .init(
                key: provider,
                value: .object(
                    Self.keptOutcomes.map { outcome in
                        .init(
                            key: outcome.rawValue,
                            value: .integer(rows.first { $0.provider == provider && $0.outcome == outcome.rawValue }?.count ?? 0))
                    }))
        }
        let events = open.map { event -> JSONValue in
            .object([
                .init(key: "provider", value: .string(event.provider.rawValue)),
                .init(key: "eventId", value: .string(event.eventId)),
                .init(key: "type", value: .string(event.type)),
                .init(key: "objectId", value: .string(event.objectId)),
                .init(key: "environment", value: .string(event.environment.rawValue)),
                .init(key: "outcome", value: .string(event.outcome.rawValue)),
                .init(key: "externalPurchaseId", value: event.externalPurchaseId.map { .string(ids($0)) } ?? .null),
                .init(key: "waitingFor", value: event.waitingFor.map(JSONValue.string) ?? .null),
                .init(key: "problem", value: event.problem.map(JSONValue.string) ?? .null),
                .init(key: "receivedAt", value: .integer(event.receivedAt)),
            ])
        }
        return .object([.init(key: "events", value: .object(byProvider)), .init(key: "open", value: .array(events))])
    }

    /// A table of events by provider and outcome, then the parked, waiting and held ones with why.
    public var text: String {
        var out = "payment providers (webhook events by what became of them):\n"
        var table = [["provider"] + Self.keptOutcomes.map(\.rawValue)]
        for provider in providers {
            table.append(
                [provider]
                    + Self.keptOutcomes.map { outcome in
                        String(rows.first { $0.provider == provider && $0.outcome == outcome.rawValue }?.count ?? 0)
                    })
        }
        if providers.isEmpty { table.append(["(no events yet)"] + Self.keptOutcomes.map { _ in "" }) }
        let widths = table[0].indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        for row in table {
            out +=
                "  "
                + zip(row, widths).enumerated().map { index, cell in
                    index == 0
                        ? cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: cell.1 - cell.0.count) + cell.0
                }.joined(separator: "  ").trimmingTrailingSpaces + "\n"
        }
        if !open.isEmpty {
            out += "\nparked, waiting and held events (newest first; held ones are never sent to Apple):\n"
            for event in open {
                var line = "  \(event.provider.rawValue)  \(event.eventId)  \(event.type)  \(event.objectId)  \(event.outcome.rawValue)"
                if let id = event.externalPurchaseId { line += "  \(id)" }
                if let waiting = event.waitingFor, event.outcome == .parked { line += "  waiting for \(waiting)" }
                if let problem = event.problem { line += "  \(problem)" }
                out += line + "\n"
            }
        }
        return out
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = Substring(self)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
