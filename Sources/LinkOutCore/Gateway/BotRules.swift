/// Recognises prefetches and bots from request headers.
///
/// A User-Agent is matched case-insensitively against substrings: the built-in list covers search and
/// social crawlers, messaging link previews, HTTP libraries and security scanners; a config can add its
/// own. A real shopper arrives from StoreKit in Safari or the app's web view, whose User-Agent matches
/// none of these. A missing User-Agent is not taken as a bot: counting a shopper out would lose a hit.
public struct BotRules: Sendable, Equatable {
    public static let builtIn: [String] = [
        "bot", "crawler", "spider", "slurp", "facebookexternalhit", "facebookcatalog", "whatsapp",
        "skypeuripreview", "embedly", "quora link preview", "outbrain", "pinterest", "vkshare", "w3c_validator",
        "headlesschrome", "phantomjs", "lighthouse", "curl/", "wget/", "python-requests", "python-urllib",
        "aiohttp", "go-http-client", "okhttp", "java/", "libwww-perl", "httpclient", "node-fetch", "axios/",
        "scrapy", "nmap", "masscan", "zgrab", "nuclei", "sqlmap", "nikto", "censys", "shodan", "expanse",
        "httpx", "l9scan", "wpscan", "dirbuster", "gobuster",
    ]

    /// Lowercased substrings.
    public let patterns: [[UInt8]]
    /// For each byte value, the patterns starting with it: the User-Agent is read once, and at each
    /// position only the few patterns that can start there are compared (the stdlib's generic
    /// `firstRange(of:)` took about 12 million instructions per User-Agent for this list; this takes a
    /// few thousand).
    private let byFirstByte: [[Int]]
    /// One bit per pair of bytes, in either case, that starts a pattern, indexed by the pair as one
    /// little-endian 16-bit load: most positions of a User-Agent are passed over after that load and one
    /// bit test, with no lowercasing (folded into the table instead: about 9 instructions a byte, where
    /// lowercasing each byte first cost 30).
    private let startPairs: [UInt64]
    /// One bit per pattern's first three bytes (a two-byte pattern's two and any third), hashed: where a
    /// start pair's bit is set, this turns away most positions before any pattern is compared (Safari's
    /// User-Agent has seven such pairs, the "li" of "like" among them, and no such triple).
    private let startTriples: [UInt64]

    public init(extra: [String] = []) {
        self.init(lowercasedPatterns: (Self.builtIn + extra).map { Array($0.utf8).map(Self.lowercased) })
    }

    /// Patterns of at least two bytes, already lowercase.
    private init(lowercasedPatterns: [[UInt8]]) {
        patterns = lowercasedPatterns
        var table = [[Int]](repeating: [], count: 256)
        var pairs = [UInt64](repeating: 0, count: 65_536 / 64)
        var triples = [UInt64](repeating: 0, count: (1 << Self.tripleBits) / 64)
        for (index, pattern) in patterns.enumerated() {
            table[Int(pattern[0])].append(index)
            for first in Self.spellings(pattern[0]) {
                for second in Self.spellings(pattern[1]) {
                    let pair = Int(first) | Int(second) << 8
                    pairs[pair >> 6] |= 1 << UInt64(pair & 63)
                }
            }
            for third in pattern.count > 2 ? [pattern[2]] : Array(0...255) {
                let triple = Self.triple(pattern[0], pattern[1], third)
                triples[triple >> 6] |= 1 << UInt64(triple & 63)
            }
        }
        byFirstByte = table
        startPairs = pairs
        startTriples = triples
    }

    private static let tripleBits = 12

    /// Three bytes' bit in `startTriples`. Each byte is folded with `| 0x20`, which lowers a letter and maps
    /// any byte that lowercases to a pattern's byte onto that byte's own fold, so no match is turned away;
    /// then hashed (Fibonacci hashing) to `tripleBits` bits.
    @inline(__always)
    private static func triple(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> Int {
        triple(UInt64(a) | UInt64(b) << 8 | UInt64(c) << 16)
    }

    /// The same, for three bytes in the lowest bits of `bytes`, the first lowest (higher bits are ignored).
    @inline(__always)
    private static func triple(_ bytes: UInt64) -> Int {
        let folded = UInt32(truncatingIfNeeded: bytes & 0xFF_FFFF) | 0x20_2020
        return Int(truncatingIfNeeded: (folded &* 0x9E37_79B1) >> (32 - UInt32(tripleBits)))
    }

    /// The bytes that lowercase to `byte`.
    private static func spellings(_ byte: UInt8) -> [UInt8] {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? [byte, byte - 0x20] : [byte]
    }

    public static let defaults = BotRules()

    public static func == (lhs: BotRules, rhs: BotRules) -> Bool { lhs.patterns == rhs.patterns }

    public func kind(method: RequestMethod, purpose: String?, secPurpose: String?, userAgent: String?) -> VisitKind {
        if method == .head { return .head }
        if let purpose, Self.prefetch.contains(in: purpose) { return .prefetch }
        if let secPurpose, Self.prefetch.contains(in: secPurpose) { return .prefetch }
        if let userAgent, isBot(userAgent) { return .bot }
        return .shopper
    }

    private static let prefetch = BotRules(lowercasedPatterns: [Array("prefetch".utf8)])

    public func isBot(_ userAgent: String) -> Bool {
        contains(in: userAgent)
    }

    /// Whether any pattern occurs in `text`, ignoring ASCII case.
    private func contains(in text: String) -> Bool {
        if let found = text.utf8.withContiguousStorageIfAvailable({ contains(in: $0) }) { return found }
        return Array(text.utf8).withUnsafeBufferPointer { contains(in: $0) }
    }

    private func contains(in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        startPairs.withUnsafeBufferPointer { pairs in
            startTriples.withUnsafeBufferPointer { triples in
                var start = 0
                while let candidate = Self.nextCandidate(in: bytes, from: start, pairs: pairs, triples: triples) {
                    if matches(at: candidate, in: bytes) { return true }
                    start = candidate + 1
                }
                return false
            }
        }
    }

    /// The first position from `start` where a pattern may start, if any: its pair of bytes starts one, and
    /// so do its three (when it has a third). A loop of its own, with nothing else in it, so it keeps
    /// everything in registers; four positions at a time from one eight-byte load, which also holds each
    /// one's third byte (about 8 instructions a position, where a 16-bit load per position took 9 and a
    /// return to the caller for each pair's hit some 30 more).
    @inline(never)
    private static func nextCandidate(
        in bytes: UnsafeBufferPointer<UInt8>, from start: Int, pairs: UnsafeBufferPointer<UInt64>, triples: UnsafeBufferPointer<UInt64>
    ) -> Int? {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return nil }
        /// `bytes`: the position's bytes in its lowest bits, the first lowest.
        @inline(__always) func mayStart(_ bytes: UInt64, hasThird: Bool) -> Bool {
            let pair = bytes & 0xFFFF
            guard pairs[Int(truncatingIfNeeded: pair &>> 6)] & (1 &<< (pair & 63)) != 0 else { return false }
            guard hasThird else { return true }
            let triple = Self.triple(bytes)
            return triples[triple &>> 6] & (1 &<< UInt64(triple & 63)) != 0
        }
        var position = start
        while position &+ 8 <= bytes.count {
            // Positions `position` to `position + 3`, at bytes 0 to 3 of the word.
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            if mayStart(word, hasThird: true) { return position }
            if mayStart(word &>> 8, hasThird: true) { return position &+ 1 }
            if mayStart(word &>> 16, hasThird: true) { return position &+ 2 }
            if mayStart(word &>> 24, hasThird: true) { return position &+ 3 }
            position &+= 4
        }
        while position &+ 1 < bytes.count {
            let hasThird = position &+ 2 < bytes.count
            var next = UInt64(base.load(fromByteOffset: position, as: UInt8.self))
            next |= UInt64(base.load(fromByteOffset: position &+ 1, as: UInt8.self)) &<< 8
            if hasThird { next |= UInt64(base.load(fromByteOffset: position &+ 2, as: UInt8.self)) &<< 16 }
            if mayStart(next, hasThird: hasThird) { return position }
            position &+= 1
        }
        return nil
    }

    /// Whether a pattern starts at `start`, its first two bytes known to be a pattern's start.
    private func matches(at start: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in byFirstByte[Int(Self.lowercased(bytes[start]))] {
            let pattern = patterns[index]
            guard bytes.count - start >= pattern.count else { continue }
            var offset = 1
            while offset < pattern.count, Self.lowercased(bytes[start + offset]) == pattern[offset] { offset += 1 }
            if offset == pattern.count { return true }
        }
        return false
    }

    @inline(__always)
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }
}
