/// The path of a request no link serves, as kept with an unrouted token and written in logs: at most
/// `maxBytes` bytes, every byte outside printable ASCII (and `%` itself, so the form is unambiguous)
/// percent-encoded, an escape never cut in half. Nothing else is changed: `/NL/` stays `/NL/`, so an
/// operator sees exactly what the app's Info.plist sent.
public enum UnroutedPath {
    public static let maxBytes = 128

    public static func sanitise(_ path: some Sequence<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(maxBytes)
        for byte in path {
            let keep = byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%")
            let needed = keep ? 1 : 3
            if out.count + needed > maxBytes { break }
            if keep {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
