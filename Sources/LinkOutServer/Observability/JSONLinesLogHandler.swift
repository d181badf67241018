import Foundation
import LinkOutCore
import Logging

/// A swift-log handler that writes one JSON object per entry: `time` (ISO 8601), `level`, `label`,
/// `message`, then the metadata as fields (integers unquoted). Used for the access log, and for the
/// operator log with `--log-format json`.
///
/// Lines go into a shared `LogSink`, which writes them to the file descriptor when flushed (the access
/// log flushes once per batch) or at once when `autoFlush` is on.
package struct JSONLinesLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    private let label: String
    private let sink: LogSink
    /// Each entry's `time`.
    private let clock: TimeSource

    package init(label: String, sink: LogSink, clock: TimeSource) {
        self.label = label
        self.sink = sink
        self.clock = clock
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var line =
            "{\"time\":\"\(UTCDate.format(milliseconds: clock.nowMs()))\",\"level\":\"\(event.level)\",\"label\":\(JSONText.quote(label))"
        line += ",\"message\":\(JSONText.quote(event.message.description))"
        let merged = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        for key in merged.keys.sorted() {
            line += ",\(JSONText.quote(key)):\(Self.render(merged[key]!))"
        }
        line += "}\n"
        sink.append(line)
    }

    private static func render(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return JSONText.quote(text)
        case .stringConvertible(let convertible):
            if convertible is Int || convertible is Int64 || convertible is UInt64 || convertible is Double {
                return convertible.description
            }
            return JSONText.quote(convertible.description)
        case .array(let values): return "[" + values.map(render).joined(separator: ",") + "]"
        case .dictionary(let dictionary):
            return "{" + dictionary.keys.sorted().map { "\(JSONText.quote($0)):\(render(dictionary[$0]!))" }.joined(separator: ",") + "}"
        }
    }
}
