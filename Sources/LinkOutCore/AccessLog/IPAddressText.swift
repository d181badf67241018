/// IPv4 and IPv6 addresses from and to text, without the C library (the core does no C imports).
enum IPAddressText {
    static func parseIPv4(_ text: String) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                let octet = UInt32(part), octet <= 255
            else { return nil }
            value = value << 8 | octet
        }
        return value
    }

    static func formatIPv4(_ value: UInt32) -> String {
        "\(value >> 24).\(value >> 16 & 0xFF).\(value >> 8 & 0xFF).\(value & 0xFF)"
    }

    /// Sixteen bytes, from the full or `::`-compressed form (an embedded IPv4 tail is accepted).
    static func parseIPv6(_ text: String) -> [UInt8]? {
        guard text.contains(":"), text.utf8.count <= 45 else { return nil }
        var groups: [UInt16] = []
        var tail: [UInt16] = []
        var seenGap = false
        // Split once on "::" (stdlib only: no Foundation here).
        var halves: [String] = []
        if let gap = text.firstRange(of: "::") {
            halves = [String(text[..<gap.lowerBound]), String(text[gap.upperBound...])]
            if halves[1].contains("::") { return nil }
        } else {
            halves = [text]
        }
        func parseGroups(_ part: String, into result: inout [UInt16]) -> Bool {
            guard !part.isEmpty else { return true }
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (offset, piece) in pieces.enumerated() {
                if offset == pieces.count - 1, piece.contains("."), let v4 = parseIPv4(String(piece)) {
                    result.append(UInt16(v4 >> 16))
                    result.append(UInt16(v4 & 0xFFFF))
                    continue
                }
                guard (1...4).contains(piece.count), let group = UInt16(piece, radix: 16) else { return false }
                result.append(group)
            }
            return true
        }
        guard parseGroups(halves[0], into: &groups) else { return nil }
        if halves.count == 2 {
            seenGap = true
            guard parseGroups(halves[1], into: &tail) else { return nil }
        }
        let total = groups.count + tail.count
        if seenGap {
            guard total < 8 else { return nil }
            groups += [UInt16](repeating: 0, count: 8 - total) + tail
        } else {
            guard total == 8 else { return nil }
        }
        return groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// RFC 5952 text: lowercase, leading zeros dropped, the longest run of zero groups (two or more) as `::`.
    /// The IPv4 netmask of a /`bits` prefix (0 to 32).
    static func ipv4Mask(bits: Int) -> UInt32 {
        bits <= 0 ? 0 : bits >= 32 ? .max : UInt32.max << UInt32(32 - bits)
    }

    /// The 16 bytes of an IPv6 address with every bit past the first `bits` zeroed.
    static func masked(_ bytes: [UInt8], bits: Int) -> [UInt8] {
        var result = bytes
        for index in 0..<16 {
            let before = index * 8
            if before >= bits {
                result[index] = 0
            } else if before + 8 > bits {
                result[index] &= UInt8(truncatingIfNeeded: 0xFF << (8 - (bits - before)))
            }
        }
        return result
    }

    static func formatIPv6(_ bytes: [UInt8]) -> String {
        let groups = (0..<8).map { UInt16(bytes[$0 * 2]) << 8 | UInt16(bytes[$0 * 2 + 1]) }
        var bestStart = -1, bestLength = 0, runStart = -1
        for index in 0...8 {
            if index < 8, groups[index] == 0 {
                if runStart < 0 { runStart = index }
            } else if runStart >= 0 {
                if index - runStart > bestLength {
                    bestStart = runStart
                    bestLength = index - runStart
                }
                runStart = -1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        var text = ""
        var index = 0
        while index < 8 {
            if index == bestStart {
                text += "::"
                index += bestLength
                continue
            }
            if !text.isEmpty, !text.hasSuffix(":") { text += ":" }
            text += String(groups[index], radix: 16)
            index += 1
        }
        return text
    }
}
