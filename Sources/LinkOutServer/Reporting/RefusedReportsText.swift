import LinkOutCore

/// The one sentence that names the reports Apple refused, for serve's start-up line and the daily warning,
/// with the commands an operator runs.
enum RefusedReportsText {
    static func line(_ refused: (count: Int64, months: [UTCMonth])) -> String {
        let months = refused.months.map(\.description).joined(separator: ", ")
        return "\(refused.count) report(s) Apple refused hold their tokens unreported"
            + (months.isEmpty ? "" : " and keep month(s) \(months) open")
            + "; linkout report status lists them and when each is sent again, linkout report retry --all sends them now"
    }
}
