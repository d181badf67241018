/// An access record as one JSON line, written byte by byte into the batch's buffer: the same fields, in
/// the same order, as the operator log's JSON lines (`time`, `level`, `label`, `message`, then the fields
/// by name), without building a metadata dictionary, sorting keys or concatenating strings per request,
/// which cost the access log more than the rest of the request path once did.
public enum AccessLogLine {
    /// - Parameters:
    ///   - time: the `time` field's ISO 8601 text (when the batch is written), formatted once per batch.
    ///   - client: the client's address as the log keeps it (already truncated by `ClientAddressPolicy`).
    public static func append(_ record: AccessRecord, time: String, client: String, to output: inout [UInt8]) {
        literal(#"{"time":""#, into: &output)
        unquoted(time, into: &output)
        literal(#"","level":"info","label":"linkout.access","message":"request","client":"#, into: &output)
        quote(client, into: &output)
        string(#","destination":"#, record.destination, into: &output)
        literal(#","durationUs":"#, into: &output)
        decimal(record.durationMicroseconds, into: &output)
        string(#","externalPurchaseId":"#, record.externalPurchaseId, into: &output)
        string(#","kind":"#, record.kind, into: &output)
        literal(#","method":"#, into: &output)
        quote(record.method, into: &output)
        string(#","reason":"#, record.reason, into: &output)
        literal(#","route":"#, into: &output)
        quote(record.route, into: &output)
        literal(#","status":"#, into: &output)
        decimal(Int64(record.status), into: &output)
        literal(#","ts":"#, into: &output)
        decimal(record.time, into: &output)
        literal("}\n", into: &output)
    }

    /// An optional field: its `,"name":` and quoted value, or nothing when there is no value.
    private static func string(_ key: StaticString, _ value: String?, into output: inout [UInt8]) {
        guard let value else { return }
        output.append(contentsOf: UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        quote(value, into: &output)
    }

    private static func quote(_ text: String, into output: inout [UInt8]) { JSONText.appendQuoted(text, to: &output) }

    /// The line's fixed parts and the batch's time, each by one copy: appending a string's `utf8` view went
    /// through the generic path byte by byte, a tenth of the access log thread's instructions (callgrind).
    private static func literal(_ text: StaticString, into output: inout [UInt8]) {
        output.append(contentsOf: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static func unquoted(_ text: String, into output: inout [UInt8]) {
        var text = text
        text.withUTF8 { output.append(contentsOf: $0) }
    }
    private static func decimal(_ value: Int64, into output: inout [UInt8]) { JSONText.appendDecimal(value, to: &output) }
}
