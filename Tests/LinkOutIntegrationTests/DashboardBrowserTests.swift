import Foundation
import Testing
import LinkOutTestSupport

/// The dashboard's pages in headless Chromium (Support/dashboard_browser.py, through Selenium) against the
/// real binary and real traffic: no console error, no failed request, every chart holding the numbers the
/// API answers, the range picker redrawing them, and a page refused without a key when keys are set.
/// Screenshots go to .build/dashboard-screenshots (docs/ keeps two of them).
@Suite(.serialized) struct DashboardBrowserTests {
    typealias Body = [String: Any]

    static let screenshots = LinkoutBinary.packageRoot.path + "/.build/dashboard-screenshots"

    /// Runs the script on `pages`; its one JSON line, parsed.
    static func browse(_ adminPort: Int, _ pages: [String]) throws -> Body {
        let result = try Command.python([
            LinkoutBinary.packageRoot.path + "/Tests/LinkOutIntegrationTests/Support/dashboard_browser.py",
            "http://127.0.0.1:\(adminPort)", screenshots,
        ] + pages)
        guard result.status == 0, let body = try JSONSerialization.jsonObject(with: result.stdout) as? Body else {
            throw GatewayProcess.StartError(description: "dashboard_browser.py failed (chromium, chromium-driver and selenium: scripts/install-deps): \(result.stderr)")
        }
        return body
    }

    /// A chart's datasets as label → sum of its data.
    static func sums(_ chart: Any?) -> [String: Int] {
        let datasets = (chart as? Body)?["datasets"] as? [Body] ?? []
        var sums: [String: Int] = [:]
        for dataset in datasets { sums[dataset["label"] as? String ?? "?"] = (dataset["data"] as? [Int] ?? []).reduce(0, +) }
        return sums
    }

    static func labels(_ chart: Any?) -> [String] { (chart as? Body)?["labels"] as? [String] ?? [] }

    @Test func everyPageShowsTheAPIsNumbersWithNoErrorAndTheRangePickerRedrawsThem() throws {
        let setup = DashboardAPITests.Setup()
        let server = try setup.serve()
        defer { server.stop() }
        _ = try DashboardAPITests.sendTraffic(setup, server)
        // The refusals are in the store before the browser looks.
        _ = try DashboardAPITests.overview(server, "range=day", refusals: 3)

        let seen = try Self.browse(server.adminPort, ["/", "/link/nl", "/link/de"])
        let pages = try #require(seen["pages"] as? [String: Body])
        for (page, body) in pages {
            #expect(body["refused"] == nil, "\(page)")
            #expect((body["console"] as? [String])?.isEmpty == true, "\(page): \(body["console"] ?? "")")
            #expect((body["failed"] as? [String])?.isEmpty == true, "\(page): \(body["failed"] ?? "")")
        }

        for (page, link) in [("/", ""), ("/link/nl", "nl"), ("/link/de", "de")] {
            let body = try #require(pages[page])
            let linkQuery = link.isEmpty ? "" : "&link=\(link)"
            for (range, key) in [("day", "default"), ("hour", "hour")] {
                let shown = try #require(body[key] as? Body)
                #expect(shown["query"] as? String == "range=\(range)\(linkQuery)")
                let charts = try #require(shown["charts"] as? Body)
                let api = try #require(try DashboardAPITests.json(server, "/api/overview?range=\(range)\(linkQuery)").body["data"] as? Body)
                let prefix = { (series: Body) in link.isEmpty ? "\(series["link"]!) · " : "" }
                // Visits: one dataset per link and kind, holding the API's counts.
                var visits: [String: Int] = [:]
                for series in api["visits"] as? [Body] ?? [] {
                    visits[prefix(series) + "\(series["key"]!)"] = (series["counts"] as? [Int] ?? []).reduce(0, +)
                }
                #expect(Self.sums(charts["visits"]) == visits, "\(page) \(range)")
                #expect(!visits.isEmpty)
                let steps = ((api["visits"] as? [Body])?.first?["counts"] as? [Int])?.count
                #expect(Self.labels(charts["visits"]).count == steps, "one label per step")
                var refusals: [String: Int] = [:]
                for series in api["refusals"] as? [Body] ?? [] {
                    refusals[prefix(series) + "\(series["key"]!)"] = (series["counts"] as? [Int] ?? []).reduce(0, +)
                }
                #expect(Self.sums(charts["refusals"]) == refusals, "\(page) \(range)")
                for name in ["destinations", "countries"] {
                    let shares = api[name] as? [Body] ?? []
                    #expect(Self.labels(charts[name]) == shares.map { prefix($0) + "\($0["key"]!)" }, "\(page) \(name)")
                    #expect(Self.sums(charts[name]).values.reduce(0, +) == shares.map { $0["visits"] as? Int ?? 0 }.reduce(0, +))
                }
                var variants: [String: Int] = [:]
                for variant in api["experiments"] as? [Body] ?? [] {
                    variants[prefix(variant) + "\(variant["experiment"]!) · \(variant["variant"]!)"] = variant["visits"] as? Int
                }
                #expect(Self.sums(charts["experiments"]) == variants, "\(page) \(range)")
                let reporting = try DashboardAPITests.json(server, "/api/reporting").body
                let states = reporting["states"] as? [String: Int] ?? [:]
                let stateData = ((charts["states"] as? Body)?["datasets"] as? [Body])?.first?["data"] as? [Int]
                #expect(stateData == ["waiting", "due", "sending", "retrying", "sent", "failed"].map { states[$0] ?? -1 })
                let ageData = ((charts["ages"] as? Body)?["datasets"] as? [Body])?.first?["data"] as? [Int]
                #expect(ageData == (reporting["ages"] as? [Body] ?? []).map { $0["tokens"] as? Int ?? -1 })
            }
            // The picker redrew the charts: a day is 96 or 97 steps of 15 minutes, an hour 12 or 13 of 5.
            let dayLabels = Self.labels(((body["default"] as? Body)?["charts"] as? Body)?["visits"]).count
            let hourLabels = Self.labels(((body["hour"] as? Body)?["charts"] as? Body)?["visits"]).count
            #expect([96, 97].contains(dayLabels) && [12, 13].contains(hourLabels), "\(page): \(dayLabels) then \(hourLabels)")
        }
        #expect(Set(Self.sums((((pages["/link/de"]?["hour"] as? Body)?["charts"] as? Body)?["visits"])).keys) == ["shopper"],
                "a link's page shows that link only")

        let phone = try #require(seen["phone"] as? Body)
        #expect(phone["dark"] as? Bool == true)
        #expect((phone["scrollWidth"] as? Int ?? 9999) <= (phone["innerWidth"] as? Int ?? 0), "nothing wider than a phone's screen")
        #expect((phone["console"] as? [String])?.isEmpty == true, "\(phone["console"] ?? "")")
        #expect((phone["failed"] as? [String])?.isEmpty == true, "\(phone["failed"] ?? "")")
        for name in ["overview", "link-nl", "link-de", "overview-phone-dark"] {
            #expect(FileManager.default.fileExists(atPath: "\(Self.screenshots)/\(name).png"), "\(name).png")
        }
    }

    @Test func withOperatorKeysABrowserWithoutOneIsRefused() throws {
        let setup = DashboardAPITests.Setup(adminKeys: true)
        let server = try setup.serve()
        defer { server.stop() }
        let seen = try Self.browse(server.adminPort, ["/", "/link/nl"])
        let pages = try #require(seen["pages"] as? [String: Body])
        for page in ["/", "/link/nl"] {
            #expect((pages[page]?["refused"] as? String)?.hasPrefix("Basic realm=\"linkout admin\"") == true, "\(page): \(pages[page] ?? [:])")
            #expect((pages[page]?["failed"] as? [String])?.contains { $0.hasPrefix("401 ") } == true)
        }
        #expect(seen["phone"] == nil)
    }
}
