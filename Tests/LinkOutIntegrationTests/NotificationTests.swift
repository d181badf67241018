import Foundation
import LinkOutTestSupport
import Testing

/// Apple's notifications, end to end: the real binary takes signed notifications on the shoppers'
/// listener, trusting the tests' root, and the reports they cause land on the Apple stand-in.
@Suite(.serialized) struct NotificationTests {
    func unreported(_ id: String, uuid: String = UUID().uuidString.lowercased()) throws -> String {
        try NotificationSigner.shared().sign(NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: id, uuid: uuid))
    }

    @Test func unreportedForATokenLinkoutNeverSawEndsAsAnAcceptedUnrecognizedTokenReport() throws {
        let fixture = try ReportingFixture(notifications: true)
        let server = try fixture.serve()
        let id = "never-seen-" + UUID().uuidString.lowercased()
        let answer = try fixture.notify(server, unreported(id))
        #expect(answer.status == 200)
        #expect(answer.answer == "unrecognized")
        let accepted = try fixture.production.waitForAccepted(count: 1)
        #expect(accepted.first?["externalPurchaseId"] as? String == id)
        #expect(accepted.first?["status"] as? String == "UNRECOGNIZED_TOKEN")
        server.stop()
        let notifications = try fixture.status()["notifications"] as? [String: Any]
        let latest = notifications?["latest"] as? [[String: Any]] ?? []
        #expect(latest.first?["externalPurchaseId"] as? String == id)
        #expect(latest.first?["outcome"] as? String == "unrecognized")
        #expect(latest.first?["subtype"] as? String == "UNREPORTED")
    }

    @Test func unreportedForAKnownTokenReportsItNowAndFlagsItAsReminded() throws {
        let fixture = try ReportingFixture(notifications: true)
        let server = try fixture.serve()
        // A day old: inside the 72-hour no-purchase window, so nothing would be sent yet.
        let id = try fixture.linkOut(server, ageDays: 1)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try fixture.production.reports().isEmpty)
        let answer = try fixture.notify(server, unreported(id))
        #expect(answer.status == 200)
        #expect(answer.answer == "report_due")
        let accepted = try fixture.production.waitForAccepted(count: 1)
        #expect(accepted.first?["externalPurchaseId"] as? String == id)
        #expect(accepted.first?["status"] as? String == "NO_LINE_ITEM")
        let metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        #expect(metrics.contains("linkout_tokens_reminded_total 1"), "\(metrics)")
        #expect(metrics.contains(#"linkout_notifications_total{outcome="report_due"} 1"#))
        server.stop()
        let notifications = try fixture.status()["notifications"] as? [String: Any]
        #expect(notifications?["reminded"] as? Int == 1)
    }

    @Test func unreportedForAKnownTokenWithLineItemsSendsThemNow() throws {
        // A long gather: the lines would wait an hour; Apple's reminder makes them due now.
        let fixture = try ReportingFixture(notifications: true, gather: 3600)
        let server = try fixture.serve()
        let id = try fixture.linkOut(server, ageDays: 1)
        let stored = try fixture.post(server, ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy("line-" + id.prefix(8))]])
        #expect(stored.status == 200, "\(stored.json)")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try fixture.production.reports().isEmpty, "the lines wait for their gather time")
        #expect(try fixture.notify(server, unreported(id)).answer == "report_due")
        let accepted = try fixture.production.waitForAccepted(count: 1)
        #expect(accepted.first?["status"] as? String == "LINE_ITEM")
        server.stop()
    }

    @Test func aRetriedNotificationHasOneEffect() throws {
        let fixture = try ReportingFixture(notifications: true)
        let server = try fixture.serve()
        let id = "retried-" + UUID().uuidString.lowercased()
        let jws = try unreported(id)
        #expect(try fixture.notify(server, jws) == (200, "unrecognized"))
        #expect(try fixture.notify(server, jws) == (200, "duplicate"))
        _ = try fixture.production.waitForAccepted(count: 1)
        #expect(try fixture.notify(server, jws) == (200, "duplicate"))
        Thread.sleep(forTimeInterval: 1)
        server.stop()
        #expect(try fixture.production.reports().filter { $0["externalPurchaseId"] as? String == id }.count == 1)
        let counts = (try fixture.status()["notifications"] as? [String: Any])?["counts"] as? [[String: Any]] ?? []
        #expect(counts.map { $0["count"] as? Int } == [1], "kept once: \(counts)")
    }

    @Test func createdRecordsACustomLinkTokenAndOtherSubtypesAreKept() throws {
        let fixture = try ReportingFixture(notifications: true)
        let server = try fixture.serve()
        let signer = try NotificationSigner.shared()
        let custom = "custom-" + UUID().uuidString.lowercased()
        let created = signer.sign(
            NotificationSigner.payload(
                subtype: "CREATED", externalPurchaseId: custom, created: TokenBuilder.nowMs, tokenType: "ACQUISITION",
                expiration: TokenBuilder.nowMs + 30 * 86_400_000))
        #expect(try fixture.notify(server, created) == (200, "token_recorded"))
        let reminder = signer.sign(
            NotificationSigner.payload(subtype: "ACTIVE_TOKEN_REMINDER", externalPurchaseId: custom, created: TokenBuilder.nowMs))
        #expect(try fixture.notify(server, reminder) == (200, "token_recorded"))
        let unknown = signer.sign(NotificationSigner.payload(subtype: "SOMETHING_APPLE_ADDS_LATER", externalPurchaseId: "x-" + custom))
        #expect(try fixture.notify(server, unknown) == (200, "stored"))
        let otherType = signer.sign(NotificationSigner.payload(subtype: nil, externalPurchaseId: "y-" + custom, type: "SOMETHING_ELSE"))
        #expect(try fixture.notify(server, otherType) == (200, "stored"))
        Thread.sleep(forTimeInterval: 0.5)
        server.stop()
        // A minted custom-link token is no unrecognized one: it waits for its window like a visit's.
        #expect(try fixture.production.reports().isEmpty)
        #expect(try fixture.statusRow()["waiting"] as? Int == 1)
        let latest = (try fixture.status()["notifications"] as? [String: Any])?["latest"] as? [[String: Any]] ?? []
        #expect(Set(latest.compactMap { $0["outcome"] as? String }) == ["token_recorded", "stored"])
    }

    /// Found while writing fuzz-notification: a notification signed "after year 9999" (any chain, any signature) made
    /// swift-certificates trap, and took the whole gateway down with it. Now a 400, and shoppers are served.
    @Test func aSignedDatePastYear9999IsRefusedAndTheGatewayStaysUp() throws {
        let fixture = try ReportingFixture(notifications: true)
        let server = try fixture.serve()
        let signer = try NotificationSigner.shared()
        let far = NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "far-future", signedDate: 1_000_000_000_000_000)
        #expect(try fixture.notify(server, signer.sign(far, chain: .otherRoot)) == (400, "malformed_payload"))
        #expect(try fixture.notify(server, signer.sign(far)) == (400, "malformed_payload"))
        #expect(try server.get(TokenBuilder.linkOut(token: TokenBuilder.minted())).status == 302)
        #expect(server.stop() == 0)
    }

    @Test func whatFailsVerificationIsRefusedAndCounted() throws {
        let fixture = try ReportingFixture(notifications: true)
        let server = try fixture.serve()
        let signer = try NotificationSigner.shared()
        let payload = NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "forged-token")
        #expect(try fixture.notify(server, signer.sign(payload, tamper: true)) == (400, "bad_signature"))
        #expect(try fixture.notify(server, signer.sign(payload, chain: .otherRoot)) == (400, "untrusted_chain"))
        #expect(try fixture.notify(server, signer.sign(payload, alg: "HS256")) == (400, "wrong_alg"))
        #expect(try fixture.notify(server, signer.sign(payload, chain: .twoCertificates)) == (400, "x5c_count"))
        #expect(try fixture.notify(server, signer.sign(payload, chain: .leafWithoutOID)) == (400, "leaf_oid_missing"))
        #expect(try fixture.notify(server, signer.sign(payload, chain: .expiredLeaf)) == (400, "untrusted_chain"))
        #expect(
            try fixture.notify(
                server,
                signer.sign(
                    NotificationSigner.payload(
                        subtype: "UNREPORTED", externalPurchaseId: "forged-token", bundleId: "com.other"))) == (400, "unknown_app"))
        let malformed = try fixture.notify(server, body: Array(#"{"signedPayload": "#.utf8))
        #expect(malformed.status == 400)
        #expect(malformed.bodyText.contains("malformed_body"))
        // Over notifications.maxBodyBytes (65536 by default): 413 from the connection layer, never read.
        #expect(try fixture.notify(server, body: [UInt8](repeating: UInt8(ascii: "a"), count: 70_000)).status == 413)
        let get = try fixture.notify(server, body: [], method: "GET")
        #expect(get.status == 405)
        #expect(get.headers["allow"] ?? get.headers["Allow"] == "POST")
        // Every other path still refuses a body, as before notifications: 400 body_not_allowed.
        let onLink = try fixture.notify(server, body: Array("hello".utf8), method: "GET", path: "/nl")
        #expect(onLink.status == 400)
        #expect(onLink[header: "X-Linkout-Reason"] == "body_not_allowed")
        #expect(try fixture.notify(server, body: Array("{}".utf8), path: "/apple/other").status == 400)
        let metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        #expect(metrics.contains(#"linkout_notifications_refused_total{reason="bad_signature"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"linkout_notifications_refused_total{reason="body_too_large"} 1"#), "\(metrics)")
        server.stop()
        #expect(try fixture.production.reports().isEmpty)
        #expect(((try fixture.status()["notifications"] as? [String: Any])?["counts"] as? [[String: Any]])?.isEmpty == true)
    }
}
