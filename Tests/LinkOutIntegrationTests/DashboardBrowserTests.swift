import Foundation
import LinkOutTestSupport
import Testing

/// The dashboard's pages in headless Chromium (Support/dashboard_browser.py, through Selenium) against the
/// real binary and real traffic: no console error, no failed request, every chart and headline number
/// holding what the API answers, the range picker redrawing them and keeping the range in the address,
/// and a page refused without a key when keys are set. Screenshots go to .build/dashboard-screenshots
/// (docs/ keeps two of them).
@Suite(.serialized) struct DashboardBrowserTests {
    typealias Body = [String: Any]

    static let screenshots = LinkoutBinary.packageRoot.path + "/.build/dashboard-screenshots"

    /// Runs the script on `pages` (and `--address`), its screenshots' names after `prefix`; its one JSON
    /// line, parsed.
    static func browse(_ adminPort: Int, _ pages: [String], address: Bool = false, prefix: String = "") throws -> Body {
        let result = try Command.python(
            [
                LinkoutBinary.packageRoot.path + "/Tests/LinkOutIntegrationTests/Support/dashboard_browser.py",
                "http://127.0.0.1:\(adminPort)", screenshots, "--prefix=\(prefix)",
            ] + (address ? ["--address"] : []) + pages)
        guard result.status == 0, let body = try JSONSerialization.jsonObject(with: result.stdout) as? Body else {
            throw GatewayProcess.StartError(
                description: "dashboard_browser.py failed (chromium, chromium-driver and selenium: scripts/install-deps): \(result.stderr)")
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

    /// A chart's datasets as label → colour, as hue, saturation and lightness (`hsl(211, 80%, 45%)`).
    static func colours(_ chart: Any?) -> [String: [Int]] {
        var colours: [String: [Int]] = [:]
        for dataset in (chart as? Body)?["datasets"] as? [Body] ?? [] {
            let text = dataset["color"] as? String ?? ""
            colours[dataset["label"] as? String ?? "?"] = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        }
        return colours
    }

    /// The headline numbers as the page shows them, from the API's totals and reporting states.
    /// - Parameter reportingOn: false for a config with no `reporting` section, whose reported tile says OFF.
    static func expectTotals(
        _ shown: Any?, _ totals: Body, reporting: Body, reportingOn: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let tiles = (shown as? Body)?["totals"] as? [String: String] ?? [:]
        let count = { (name: String) in totals[name] as? Int ?? -1 }
        let percent = { (x: Double) in String(format: "%.1f%%", x * 100) }
        #expect(tiles["total-visits"] == "\(count("visits"))", sourceLocation: sourceLocation)
        #expect(tiles["total-shoppers"] == "\(count("shoppers"))", sourceLocation: sourceLocation)
        #expect(tiles["total-refused"] == percent(totals["refusalRate"] as? Double ?? -1), sourceLocation: sourceLocation)
        #expect(tiles["total-refused-note"] == "\(count("refusals")) of \(count("linkOuts")) link-outs", sourceLocation: sourceLocation)
        guard reportingOn else {
            #expect(
                tiles["total-reported"] == "OFF" && tiles["total-reported-note"] == "no reporting section: nothing is sent",
                sourceLocation: sourceLocation)
            return
        }
        // The share of production tokens due a report that Apple accepted (sandbox and in-window apart).
        let due = reporting["due"] as? [String: Int] ?? [:]
        let tokens = due["tokens"] ?? -1, reported = due["reported"] ?? -1
        if tokens > 0 {
            #expect(tiles["total-reported"] == percent(Double(reported) / Double(tokens)), sourceLocation: sourceLocation)
            #expect(
                tiles["total-reported-note"] == "\(reported) of \(tokens) production tokens due a report", sourceLocation: sourceLocation)
        } else {
            #expect(
                tiles["total-reported"] == "–" && tiles["total-reported-note"] == "no production token due a report yet",
                sourceLocation: sourceLocation)
        }
    }

    @Test func everyPageShowsTheAPIsNumbersWithNoErrorAndTheRangePickerRedrawsThem() throws {
        let setup = DashboardAPITests.Setup()
        let server = try setup.serve()
        defer { server.stop() }
        _ = try DashboardAPITests.sendTraffic(setup, server)
        // The refusals are in the store before the browser looks.
        _ = try DashboardAPITests.overview(server, "range=day", refusals: 3)

        let seen = try Self.browse(server.adminPort, ["/", "/link/nl", "/link/de"], address: true)
        let pages = try #require(seen["pages"] as? [String: Body])
        for (page, body) in pages {
            #expect(body["refused"] == nil, "\(page)")
            #expect((body["console"] as? [String])?.isEmpty == true, "\(page): \(body["console"] ?? "")")
            #expect((body["failed"] as? [String])?.isEmpty == true, "\(page): \(body["failed"] ?? "")")
        }

        for (page, link) in [("/", ""), ("/link/nl", "nl"), ("/link/de", "de")] {
            let body = try #require(pages[page])
            let linkQuery = link.isEmpty ? "" : "&link=\(link)"
            // All the traffic is seconds old: the page opens on the last hour, its address naming none.
            for (range, key) in [("hour", "default"), ("day", "picked")] {
                let shown = try #require(body[key] as? Body)
                #expect(shown["query"] as? String == "range=\(range)\(linkQuery)")
                #expect(shown["preset"] as? String == range, "\(page) \(key): the picker shows the range drawn")
                let path = link.isEmpty ? "/" : "/link/\(link)"
                if key == "default" {
                    #expect(shown["search"] as? String == "", "\(page): the default is not written into the address")
                } else {
                    // Picked: in the address and in every link to the other pages, without loading the page again.
                    #expect(
                        shown["search"] as? String == "?range=day" && shown["path"] as? String == path, "\(page): \(shown["search"] ?? "")")
                    #expect(shown["kept"] as? Bool == true, "\(page): the page was loaded again")
                    let links = shown["links"] as? [String] ?? []
                    #expect(links.count == 4 && links.allSatisfy { $0.hasSuffix("?range=day") }, "\(page): \(links)")
                }
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
                let totals = (try DashboardAPITests.json(server, "/api/overview?range=\(range)\(linkQuery)").body["data"] as? Body)?[
                    "totals"]
                // The setup's config has no reporting section.
                Self.expectTotals(shown, totals as? Body ?? [:], reporting: reporting, reportingOn: false)
                // nl has an experiment; de has none, so its page says how to add one instead of an empty chart.
                let experiments = shown["experiments"] as? Body ?? [:]
                #expect(experiments["chart"] as? Bool == (link != "de"), "\(page)")
                #expect(
                    ((experiments["note"] as? String)?.hasPrefix("This link has no experiment. To split") ?? false) == (link == "de"),
                    "\(page): \(experiments)")
            }
            // The picker redrew the charts: an hour is 12 or 13 steps of 5 minutes, a day 96 or 97 of 15.
            let hourLabels = Self.labels(((body["default"] as? Body)?["charts"] as? Body)?["visits"]).count
            let dayLabels = Self.labels(((body["picked"] as? Body)?["charts"] as? Body)?["visits"]).count
            #expect([12, 13].contains(hourLabels) && [96, 97].contains(dayLabels), "\(page): \(hourLabels) then \(dayLabels)")
        }
        #expect(
            Set(Self.sums((((pages["/link/de"]?["default"] as? Body)?["charts"] as? Body)?["visits"])).keys) == ["shopper"],
            "a link's page shows that link only")

        // Visits' colours: a hue per link, the same on the link's own page, and a shade per kind.
        let colours = Self.colours(((pages["/"]?["default"] as? Body)?["charts"] as? Body)?["visits"])
        #expect(colours.count == 5 && colours.values.allSatisfy { $0.count == 3 }, "\(colours)")
        for link in ["nl", "de"] {
            let own = colours.filter { $0.key.hasPrefix("\(link) · ") }
            #expect(Set(own.values.map { $0[0] }).count == 1, "\(link)'s kinds share its hue: \(own)")
            #expect(Set(own.values).count == own.count, "\(link)'s kinds differ: \(own)")
            let page = Self.colours(((pages["/link/\(link)"]?["default"] as? Body)?["charts"] as? Body)?["visits"])
            #expect(page["shopper"] != nil && page["shopper"] == colours["\(link) · shopper"], "\(link): \(page)")
        }
        #expect(colours["nl · shopper"]?[0] != colours["de · shopper"]?[0], "two links' shoppers: \(colours)")
        // Each kind is one shade on every link: nl's and de's shoppers differ in hue only.
        #expect(colours["nl · shopper"]?.dropFirst() == colours["de · shopper"]?.dropFirst())

        // The range through the address: opened from it, carried by a link, a custom one submitted, back and
        // forward, and a reload.
        let address = try #require(seen["address"] as? Body)
        #expect((address["console"] as? [String])?.isEmpty == true && (address["failed"] as? [String])?.isEmpty == true, "\(address)")
        let opened = address["opened"] as? Body ?? [:]
        #expect(opened["preset"] as? String == "week")
        #expect([168, 169].contains(Self.labels((opened["charts"] as? Body)?["visits"]).count), "a week in hours")
        let followed = address["followed"] as? Body ?? [:]
        #expect(
            followed["path"] as? String == "/link/de" && followed["search"] as? String == "?range=week"
                && followed["preset"] as? String == "week")
        let custom = address["custom"] as? Body ?? [:]
        let customQuery = try #require((custom["query"] as? String)?.replacingOccurrences(of: "&link=de", with: ""))
        #expect(customQuery.hasPrefix("from="))
        #expect(custom["search"] as? String == "?" + customQuery && custom["kept"] as? Bool == true, "\(custom["search"] ?? "")")
        #expect([24, 25].contains(Self.labels((custom["charts"] as? Body)?["visits"]).count), "two hours in 5-minute steps")
        let back = address["back"] as? Body ?? [:]
        #expect(back["search"] as? String == "?range=week" && back["preset"] as? String == "week" && back["kept"] as? Bool == true)
        #expect((address["forward"] as? Body)?["search"] as? String == "?" + customQuery)
        let reloaded = address["reloaded"] as? Body ?? [:]
        #expect(reloaded["kept"] as? Bool == false, "a reload")
        #expect(reloaded["preset"] as? String == "custom" && reloaded["search"] as? String == "?" + customQuery)
        #expect(reloaded["custom"] as? [String: String] == custom["custom"] as? [String: String], "the custom inputs show the range again")

        let phone = try #require(seen["phone"] as? Body)
        #expect(phone["dark"] as? Bool == true)
        #expect((phone["scrollWidth"] as? Int ?? 9999) <= (phone["innerWidth"] as? Int ?? 0), "nothing wider than a phone's screen")
        #expect((phone["console"] as? [String])?.isEmpty == true, "\(phone["console"] ?? "")")
        #expect((phone["failed"] as? [String])?.isEmpty == true, "\(phone["failed"] ?? "")")
        for name in ["overview", "link-nl", "link-de", "overview-phone-dark"] {
            #expect(FileManager.default.fileExists(atPath: "\(Self.screenshots)/\(name).png"), "\(name).png")
        }
    }

    /// A new operator's first minutes (the README's way: one link, no experiment, a few link-outs): the page
    /// opens on the last hour, its headline numbers are the store's, and the experiments' section says how
    /// to add one instead of drawing an empty chart.
    @Test func aNewInstallOpensOnItsLastHourWithItsTotalsAndNoEmptyExperimentsChart() throws {
        let fixture = try ReportingFixture()
        var server = try fixture.serve(reporting: false)
        // One token created 4 days ago, reported at once (NO_LINE_ITEM after 72 hours), three fresh ones
        // waiting, and one link-out refused.
        try fixture.linkOut(server, ageDays: 4)
        for _ in 0..<3 { try fixture.linkOut(server, ageDays: 0) }
        #expect(try server.get("/nl?bundleId=com.example").status == 400)
        server.stop()
        #expect(try fixture.report().status == 0)
        #expect(try fixture.production.accepted().count == 1)
        server = try fixture.serve()
        defer { server.stop() }

        let seen = try Self.browse(server.adminPort, ["/"], prefix: "new-install-")
        let page = try #require((seen["pages"] as? [String: Body])?["/"])
        #expect((page["console"] as? [String])?.isEmpty == true && (page["failed"] as? [String])?.isEmpty == true, "\(page)")
        let shown = try #require(page["default"] as? Body)
        #expect(shown["preset"] as? String == "hour" && shown["query"] as? String == "range=hour")
        #expect([12, 13].contains(Self.labels((shown["charts"] as? Body)?["visits"]).count))
        let totals = (try DashboardAPITests.json(server, "/api/overview?range=hour").body["data"] as? Body)?["totals"] as? Body ?? [:]
        #expect(
            totals["visits"] as? Int == 4 && totals["shoppers"] as? Int == 4 && totals["refusals"] as? Int == 1
                && totals["linkOuts"] as? Int == 5)
        let reporting = try DashboardAPITests.json(server, "/api/reporting").body
        #expect(reporting["states"] as? [String: Int] == ["waiting": 3, "due": 0, "sending": 0, "retrying": 0, "sent": 1, "failed": 0])
        Self.expectTotals(shown, totals, reporting: reporting)
        // The one token past its window is reported; the three in theirs are not due: 100 %, not 25 %.
        #expect(reporting["due"] as? [String: Int] == ["tokens": 1, "reported": 1])
        #expect((shown["totals"] as? [String: String])?["total-reported"] == "100.0%")
        let experiments = shown["experiments"] as? Body ?? [:]
        #expect(experiments["chart"] as? Bool == false)
        #expect(
            (experiments["note"] as? String)?.hasPrefix("No link has an experiment. To split a link's shoppers among variants") == true,
            "\(experiments)")
        #expect((shown["charts"] as? Body)?["experiments"] == nil, "no chart drawn")
        #expect(shown["alert"] is NSNull, "reporting on and not paused: no alert (\(shown["alert"] ?? ""))")
        #expect(
            (shown["reporter"] as? String)?.hasPrefix("Reporter: on · 0 to send, 0 sending, 0 waiting to be sent again") == true,
            "\(shown["reporter"] ?? "")")
        // This month's statement: the app's row of the nl link's region (no region configured here), and
        // month close: last month's reported token is four days old, this month's three are not due yet.
        let statement = try DashboardAPITests.json(server, "/api/statement").body
        let statementRows = statement["rows"] as? [Body] ?? []
        #expect((shown["tables"] as? [String: Int])?["statement"] == max(1, statementRows.count), "\(statementRows)")
        let months =
            try JSONSerialization.jsonObject(with: Data(try fetch(port: server.adminPort, "GET", "/api/month-close").body)) as? [Body] ?? []
        #expect((shown["tables"] as? [String: Int])?["month-close"] == months.count && !months.isEmpty, "\(months)")
    }

    /// Reporting off is said above everything, and the reported tile says OFF rather than a share that
    /// will never grow; a report waiting to be sent again is listed with Apple's last answer.
    @Test func reportingOffOrStuckIsShownAboveTheCharts() throws {
        let fixture = try ReportingFixture(reporting: #""timeoutSeconds": 1,"#)
        var server = try fixture.serve(reporting: false)
        try fixture.linkOut(server, ageDays: 4)
        let seen = try Self.browse(server.adminPort, ["/"])
        let off = try #require(((seen["pages"] as? [String: Body])?["/"])?["default"] as? Body)
        #expect(
            (off["alert"] as? String)?.hasPrefix("Reporting to Apple is OFF: the config has no reporting section") == true,
            "\(off["alert"] ?? "")")
        #expect((off["totals"] as? [String: String])?["total-reported"] == "OFF")
        #expect((try DashboardAPITests.json(server, "/api/reporter").body["enabled"]) as? Bool == false)
        server.stop()

        try fixture.production.setMode(.serverError, count: 10)
        #expect(try fixture.report().stdout.contains("1 to retry"))
        server = try fixture.serve(reporting: false)
        defer { server.stop() }
        let stuck = try #require(((try Self.browse(server.adminPort, ["/"])["pages"] as? [String: Body])?["/"])?["default"] as? Body)
        #expect((stuck["reporter"] as? String)?.contains("1 waiting to be sent again") == true, "\(stuck["reporter"] ?? "")")
        #expect(
            (stuck["reporter"] as? String)?.contains("last error") == true && (stuck["reporter"] as? String)?.contains("HTTP 500") == true)
        #expect((stuck["tables"] as? [String: Int])?["waiting"] == 1)
        let api = try DashboardAPITests.json(server, "/api/reporter").body
        #expect(api["retrying"] as? Int == 1 && (api["waiting"] as? [Body])?.first?["failures"] as? Int == 1, "\(api)")
    }

    /// A report Apple refused is named above everything, from the reporter's answer read on every load (not
    /// from the last count of every token, which may be older), with the month it holds open and the command
    /// to run; month close comes before the traffic charts, and the reported tile counts the tokens due.
    @Test func aRefusedReportIsABannerAboveTheChartsAtOnce() throws {
        let fixture = try ReportingFixture(reporting: #""refusedRetries": 0,"#)
        let recorder = try fixture.serve(reporting: false)
        // Two past their window: the first sent is refused, the other accepted.
        let quiet = [try fixture.linkOut(recorder, ageDays: 5), try fixture.linkOut(recorder, ageDays: 4)]
        try fixture.linkOut(recorder, ageDays: 0, sandbox: true)
        recorder.stop()
        try fixture.production.setMode(.error400)
        #expect(try fixture.report().stdout.contains("1 failed"))
        let failed = try #require((try fixture.status()["failed"] as? [Body])?.first)
        #expect(quiet.contains(failed["externalPurchaseId"] as? String ?? ""))
        let month = try #require(failed["month"] as? String)

        let server = try fixture.serve()
        defer { server.stop() }
        let seen = try Self.browse(server.adminPort, ["/"], prefix: "refused-")
        let page = try #require((seen["pages"] as? [String: Body])?["/"])
        #expect((page["console"] as? [String])?.isEmpty == true && (page["failed"] as? [String])?.isEmpty == true, "\(page)")
        let shown = try #require(page["default"] as? Body)
        let alert = try #require(shown["alert"] as? String, "no banner: \(shown)")
        #expect(alert.contains("1 report(s) Apple refused hold their tokens unreported and keep \(month) open"), "\(alert)")
        #expect(alert.contains("linkout report retry --all"), "\(alert)")
        #expect((shown["tables"] as? [String: Int])?["failed"] == 1)
        // Two production tokens past their window, one reported: 50 %; the sandbox token is apart.
        #expect((shown["totals"] as? [String: String])?["total-reported"] == "50.0%", "\(shown["totals"] ?? "")")
        #expect(FileManager.default.fileExists(atPath: Self.screenshots + "/refused-overview.png"))
        // What is owed and month close come right after the headline numbers, before the traffic charts.
        let order = try #require(shown["sections"] as? [String])
        #expect(order.prefix(2) == ["totals", "books"], "\(order)")
        let reporter = try DashboardAPITests.json(server, "/api/reporter").body
        #expect(
            (reporter["refused"] as? [Body])?.first?["month"] as? String == month && reporter["refusedMonths"] as? [String] == [month],
            "\(reporter)")
    }

    @Test func withOperatorKeysABrowserWithoutOneIsRefused() throws {
        let setup = DashboardAPITests.Setup(adminKeys: true)
        let server = try setup.serve()
        defer { server.stop() }
        let seen = try Self.browse(server.adminPort, ["/", "/link/nl"])
        let pages = try #require(seen["pages"] as? [String: Body])
        for page in ["/", "/link/nl"] {
            #expect(
                (pages[page]?["refused"] as? String)?.hasPrefix("Basic realm=\"linkout admin\"") == true, "\(page): \(pages[page] ?? [:])")
            #expect((pages[page]?["failed"] as? [String])?.contains { $0.hasPrefix("401 ") } == true)
        }
        #expect(seen["phone"] == nil)
    }
}
