/// Compares the report body linkout sent with the copy Apple returns for it (`GET
/// /externalPurchase/v1/reports/{requestIdentifier}`) as JSON values, never as text: members in any order,
/// numbers as numbers (`2990` and `2990.0` are one value, as are `1.10` and `1.1`), and every field counts,
/// both ways. Apple documents the copy as the same `ExternalPurchaseReport` object it was sent, with no
/// field of its own, so a field only Apple's copy has is a difference too (`extra`): if Apple ever adds
/// one, `report verify` is where that shows.
///
/// Line items are matched by `lineItemId` (unique within a report, and Apple promises no order for the
/// array it returns), and named by it: `lineItems[lineItemId=order-1].taxAmount`. An array whose elements are
/// not all objects with distinct string `lineItemId`s, on either side, is compared position by position
/// (`lineItems[0]`).
public enum ReportComparison {
    /// Every difference, in the order of linkout's body (then what only Apple's copy has); empty when the
    /// two are the same report.
    public static func differences(sent: JSONValue, held: JSONValue) -> [ReportDifference] {
        var found: [ReportDifference] = []
        compare(sent, held, path: "", into: &found)
        return found
    }

    private static func compare(_ sent: JSONValue, _ held: JSONValue, path: String, into found: inout [ReportDifference]) {
        switch (sent, held) {
        case (.object(let ours), .object(let theirs)):
            let theirsByKey = firstByKey(theirs)
            let oursByKey = firstByKey(ours)
            for (key, value) in ordered(ours) {
                let inner = member(path, key)
                if let other = theirsByKey[key] {
                    compare(value, other, path: inner, into: &found)
                } else {
                    found.append(ReportDifference(path: inner, kind: .missing, sent: value, held: nil))
                }
            }
            for (key, value) in ordered(theirs) where oursByKey[key] == nil {
                found.append(ReportDifference(path: member(path, key), kind: .extra, sent: nil, held: value))
            }
        case (.array(let ours), .array(let theirs)):
            if let oursById = lineItemsById(ours), let theirsById = lineItemsById(theirs) {
                for (id, value) in oursById.ordered {
                    let inner = "\(path)[lineItemId=\(id)]"
                    if let other = theirsById.byId[id] {
                        compare(value, other, path: inner, into: &found)
                    } else {
                        found.append(ReportDifference(path: inner, kind: .missing, sent: value, held: nil))
                    }
                }
                for (id, value) in theirsById.ordered where oursById.byId[id] == nil {
                    found.append(ReportDifference(path: "\(path)[lineItemId=\(id)]", kind: .extra, sent: nil, held: value))
                }
                return
            }
            for index in 0..<max(ours.count, theirs.count) {
                let inner = "\(path)[\(index)]"
                switch (index < ours.count ? ours[index] : nil, index < theirs.count ? theirs[index] : nil) {
                case (let value?, let other?): compare(value, other, path: inner, into: &found)
                case (let value?, nil): found.append(ReportDifference(path: inner, kind: .missing, sent: value, held: nil))
                case (nil, let other?): found.append(ReportDifference(path: inner, kind: .extra, sent: nil, held: other))
                case (nil, nil): break
                }
            }
        default:
            if !sameValue(sent, held) {
                found.append(ReportDifference(path: path.isEmpty ? "(report)" : path, kind: .changed, sent: sent, held: held))
            }
        }
    }

    /// Scalars (and mismatched kinds) as JSON values: an integer and a fraction are equal when they are the
    /// same number; everything else by kind and value.
    static func sameValue(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.integer(let x), .number(let y)), (.number(let y), .integer(let x)): Int64(exactly: y) == x
        default: a == b
        }
    }

    private static func member(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// An object's members in its order, each key once (the first, as the JSON reader keeps duplicates).
    private static func ordered(_ members: [JSONValue.Member]) -> [(String, JSONValue)] {
        var seen: Set<String> = []
        return members.compactMap { seen.insert($0.key).inserted ? ($0.key, $0.value) : nil }
    }

    private static func firstByKey(_ members: [JSONValue.Member]) -> [String: JSONValue] {
        var byKey: [String: JSONValue] = [:]
        for member in members where byKey[member.key] == nil { byKey[member.key] = member.value }
        return byKey
    }

    /// The elements by `lineItemId`, when every one is an object with a string `lineItemId` and no two share
    /// one; nil otherwise (then the array is compared by position).
    private static func lineItemsById(_ elements: [JSONValue]) -> (ordered: [(String, JSONValue)], byId: [String: JSONValue])? {
        var ordered: [(String, JSONValue)] = []
        var byId: [String: JSONValue] = [:]
        for element in elements {
            guard case .object(let members) = element,
                case .string(let id)? = members.first(where: { $0.key == "lineItemId" })?.value,
                byId[id] == nil
            else { return nil }
            byId[id] = element
            ordered.append((id, element))
        }
        return (ordered, byId)
    }
}
