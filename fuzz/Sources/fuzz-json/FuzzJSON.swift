// libFuzzer target: any bytes, as a JSON document, through JSONReader (`JSONValue.parse`), with Foundation's
// JSONSerialization as the second opinion. JSONReader reads every JSON linkout takes from outside (tokens,
// configs, the checkout's line items, Apple's notifications), so it must be no more lenient than a reader
// nobody here wrote. Checked, beyond "does not crash":
//
// - what JSONSerialization (with .fragmentsAllowed, as JSONReader reads any value at the top) refuses,
//   JSONReader refuses;
// - what both read, they read alike: the same kinds, strings, array lengths, object keys (objects with a
//   repeated key excepted: JSONReader keeps every member, JSONSerialization the last), numbers to 1e-9;
// - what JSONReader reads, its `text` writes back as JSON that reads as the same value, and that
//   JSONSerialization reads too;
// - comments mode (`allowingComments`, for config files only) reads plain JSON as plain mode does, and on
//   bytes with no '/' it agrees with plain mode entirely.
//
// Deliberate differences, where JSONReader is the stricter (so none fails a check above): nesting deeper
// than 64 (JSONSerialization allows 512); a number beyond Double's range (1e400); a UTF-8 byte-order mark, or
// a document in UTF-16 or UTF-32 (JSONSerialization detects those encodings). And the one where JSONReader
// reads more: in comments mode, `//` to the end of a line is whitespace, which JSONSerialization refuses
// (so the first check is made on plain mode only).
import Foundation
import FuzzDriver
import LinkOutCore

private func check(_ condition: Bool, _ rule: @autoclosure () -> String, _ bytes: [UInt8]) {
    if !condition {
        fatalError("fuzz-json: \(rule()) — input \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)")
    }
}

/// Whether JSONSerialization's reading `theirs` is the same document as `ours`, as far as it can be told.
private func same(_ ours: JSONValue, _ theirs: Any) -> Bool {
    switch ours {
    case .null:
        return theirs is NSNull
    case .bool(let flag):
        guard let number = theirs as? NSNumber else { return false }
        return number.boolValue == flag
    case .string(let text):
        guard let string = theirs as? String else { return false }
        return string == text
    case .integer(let value):
        return close(Double(value), theirs)
    case .number(let value):
        return close(value, theirs)
    case .array(let elements):
        guard let array = theirs as? [Any], array.count == elements.count else { return false }
        return zip(elements, array).allSatisfy { same($0, $1) }
    case .object(let members):
        guard let object = theirs as? [String: Any] else { return false }
        let keys = members.map(\.key)
        // A repeated key: JSONSerialization keeps the last value, JSONReader every member (the config loader
        // names the repeat as a problem). Only the key set is compared.
        if Set(keys).count != keys.count { return Set(keys) == Set(object.keys) }
        guard object.count == members.count else { return false }
        return members.allSatisfy { member in object[member.key].map { same(member.value, $0) } ?? false }
    }
}

private func close(_ value: Double, _ theirs: Any) -> Bool {
    let other: Double
    if let decimal = theirs as? NSDecimalNumber { other = decimal.doubleValue }
    else if let number = theirs as? NSNumber { other = number.doubleValue }
    else if let double = theirs as? Double { other = double }
    else if let integer = theirs as? Int { other = Double(integer) }
    else { return false }
    if value == other { return true }
    return abs(value - other) <= 1e-9 * max(abs(value), abs(other))
}

private func foundation(_ bytes: [UInt8]) -> Any? {
    try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let ours = try? JSONValue.parse(bytes)
    let commented = try? JSONValue.parse(bytes, allowingComments: true)
    if let ours { check(commented == ours, "comments mode reads plain JSON differently", bytes) }
    if !bytes.contains(UInt8(ascii: "/")) { check(commented == ours, "comments mode disagrees on bytes without a comment", bytes) }

    let theirs = foundation(bytes)
    guard let ours else { return 0 }
    guard let theirs else {
        check(false, "JSONReader read what JSONSerialization refuses: \(ours.text.prefix(200))", bytes)
        return 0
    }
    check(same(ours, theirs), "JSONReader and JSONSerialization read different documents: \(ours.text.prefix(200))", bytes)
    let written = Array(ours.text.utf8)
    check((try? JSONValue.parse(written)) == ours, "text does not read back as the same value: \(ours.text.prefix(200))", bytes)
    check(foundation(written) != nil, "JSONSerialization refuses what text wrote: \(ours.text.prefix(200))", bytes)
    return 0
}

@_cdecl("fuzz_json_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}
