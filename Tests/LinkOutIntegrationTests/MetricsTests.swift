import Foundation
import LinkOutTestSupport
import Testing

/// `/metrics` on the admin listener, scraped and parsed as Prometheus text.
@Suite struct MetricsTests {
    /// `name{labels} value` lines, keyed by everything before the value.
    static func parse(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    @Test func countsByLinkOutcomeReasonAndDestination() throws {
        let server = try GatewayProcess.start()
        for _ in 0..<5 { #expect(try server.get(TokenBuilder.linkOut("/de", token: TokenBuilder.minted())).status == 302) }
        #expect(try fetch(port: server.port, "HEAD", TokenBuilder.linkOut("/de", token: TokenBuilder.minted())).status == 302)
        #expect(try server.get("/de?bundleId=com.example").status == 400)
        #expect(
            try server.get(TokenBuilder.linkOut("/de", token: TokenBuilder.minted(bundleId: "com.other"), bundleId: "com.other")).status
                == 400)
        #expect(try server.get("/nowhere").status == 404)
        #expect(try server.get("/metrics").status == 404, "metrics are on the admin listener only")

        let response = try fetch(port: server.adminPort, "GET", "/metrics")
        #expect(response.status == 200)
        #expect(response[header: "Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let samples = Self.parse(response.bodyText)
        // The HEAD is a redirect too, recorded as a visit of kind head.
        #expect(samples[#"linkout_link_requests_total{link="de",outcome="redirect"}"#] == 6)
        #expect(samples[#"linkout_visits_total{link="de",kind="shopper"}"#] == 5)
        #expect(samples[#"linkout_visits_total{link="de",kind="head"}"#] == 1)
        #expect(samples[#"linkout_visits_total{link="de",kind="bot"}"#] == 0)
        #expect(samples[#"linkout_all_destinations_down_total{link="de"}"#] == 0)
        #expect(samples[#"linkout_link_requests_total{link="de",outcome="rejected"}"#] == 2)
        #expect(samples[#"linkout_rejections_total{link="de",reason="missing_token"}"#] == 1)
        #expect(samples[#"linkout_rejections_total{link="de",reason="unknown_app"}"#] == 1)
        #expect(samples[#"linkout_redirects_total{link="de",destination="https://checkout.example.com/de"}"#] == 6)
        #expect(samples[#"linkout_requests_total{kind="not_found"}"#] == 2)
        #expect(samples[#"linkout_commit_seconds_count"#] ?? 0 >= 1)
        #expect(samples[#"linkout_commit_batch_size_sum"#] == 6)
        #expect(samples[#"linkout_commit_failures_total"#] == 0)
        #expect(samples[#"linkout_writer_queue_depth"#] == 0)
        #expect(samples[#"linkout_build_info{version="0.1.0"}"#] == 1)
        // Labels never carry a raw path or anything else from a request.
        #expect(!response.bodyText.contains("nowhere"))
        #expect(!response.bodyText.contains("com.other"))

        #expect(try fetch(port: server.adminPort, "GET", "/readyz").status == 200)
        #expect(try fetch(port: server.adminPort, "GET", "/healthz").status == 200)
        #expect(try fetch(port: server.adminPort, "GET", "/other").status == 404)
    }

    @Test func theAdminListenerCanBeTurnedOff() throws {
        let server = try GatewayProcess.start(extraArguments: ["--admin-listen", "off"])
        #expect(server.adminPort == 0)
        #expect(try server.get("/healthz").status == 200)
    }
}
