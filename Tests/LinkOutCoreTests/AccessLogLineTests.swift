import Foundation
import LinkOutCore
import Testing

/// Access lines are JSON any parser reads back to the record, whatever the strings hold.
@Suite struct AccessLogLineTests {
    @Test func aLineReadsBackAsTheRecord() throws {
        let record = AccessRecord(
            time: 1_795_548_471_987, method: "GET", route: "nl", status: 302, reason: "token\"odd\\\u{1}\n",
            externalPurchaseId: "d1b2c3d4-0000-4000-8000-00000000abcd", destination: "https://a.example/é", kind: "bot",
            client: "203.0.113.9", durationMicroseconds: 1234)
        var bytes: [UInt8] = []
        AccessLogLine.append(record, time: "2026-11-24T19:27:52.015Z", client: "203.0.113.0", to: &bytes)
        #expect(bytes.last == 0x0A)
        #expect(bytes.dropLast().allSatisfy { $0 != 0x0A })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["time"] as? String == "2026-11-24T19:27:52.015Z")
        #expect(object["label"] as? String == "linkout.access")
        #expect(object["message"] as? String == "request")
        #expect(object["client"] as? String == "203.0.113.0")
        #expect(object["route"] as? String == "nl")
        #expect(object["status"] as? Int == 302)
        #expect(object["ts"] as? Int64 == 1_795_548_471_987)
        #expect(object["durationUs"] as? Int == 1234)
        #expect(object["reason"] as? String == "token\"odd\\\u{1}\n")
        #expect(object["destination"] as? String == "https://a.example/é")
        #expect(object["kind"] as? String == "bot")
        #expect(object["externalPurchaseId"] as? String == "d1b2c3d4-0000-4000-8000-00000000abcd")
    }

    @Test func absentFieldsAreLeftOut() throws {
        let record = AccessRecord(time: 0, method: "HEAD", route: "healthz", status: 200, client: "::1", durationMicroseconds: 0)
        var bytes: [UInt8] = []
        AccessLogLine.append(record, time: "t", client: "::", to: &bytes)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(Set(object.keys) == ["time", "level", "label", "message", "client", "durationUs", "method", "route", "status", "ts"])
    }
}
