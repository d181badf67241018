// The SQLite store alone, no HTTP: commits batches of new tokens the way the writer thread does
// (synchronous=FULL, one transaction per batch) and prints rows per second for each slice of the table's
// growth, so a slowdown as the table outgrows its cache shows.
//
//   linkout-writer-bench PATH TOTAL [BATCH] [SLICE]
import Foundation
import LinkOutCore
import LinkOutStore

let arguments = CommandLine.arguments
guard arguments.count >= 3, let total = Int(arguments[2]) else {
    print("usage: linkout-writer-bench STORE_PATH TOTAL_ROWS [BATCH=1000] [SLICE=500000]")
    exit(2)
}
let path = arguments[1]
let batchSize = arguments.count > 3 ? Int(arguments[3]) ?? 1000 : 1000
let slice = arguments.count > 4 ? Int(arguments[4]) ?? 500_000 : 500_000

let store = try SQLiteTokenStore(path: path)
let link = Link(id: "nl", path: "/nl", country: "nl", destinations: [Destination(url: "https://checkout.example.com/nl")])
/// SplitMix64: a fast, seeded generator, so making ids costs next to nothing beside the store.
var state: UInt64 = 0x1234_5678_9ABC_DEF0
func nextRandom() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}

/// Random v4-style UUIDs: the worst case for an index, as real ids are.
let hex = Array("0123456789abcdef".utf8)
func randomID() -> String {
    var bytes = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
    var bits = nextRandom()
    var used = 0
    for index in 0..<36 where index != 8 && index != 13 && index != 18 && index != 23 {
        if used == 16 {
            bits = nextRandom()
            used = 0
        }
        bytes[index] = hex[Int(bits & 0x0F)]
        bits >>= 4
        used += 1
    }
    return String(decoding: bytes, as: UTF8.self)
}

setvbuf(stdout, nil, _IOLBF, 0)
print("rows_before,rows_in_slice,seconds,rows_per_second")
var written = 0
var sliceStart = Date()
var sliceRows = 0
let start = Date()
while written < total {
    let count = min(batchSize, total - written)
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    var batch: [VisitRecord] = []
    batch.reserveCapacity(count)
    for _ in 0..<count {
        let token = ExternalPurchaseToken(appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: now, externalPurchaseId: randomID())
        batch.append(.token(TokenRecord(token: token, link: link, destination: link.destinations[0].url, seenAt: now, stale: false)))
    }
    try store.commit(batch)
    written += count
    sliceRows += count
    if sliceRows >= slice || written == total {
        let seconds = Date().timeIntervalSince(sliceStart)
        print("\(written - sliceRows),\(sliceRows),\(String(format: "%.2f", seconds)),\(Int(Double(sliceRows) / seconds))")
        sliceStart = Date()
        sliceRows = 0
    }
}
let seconds = Date().timeIntervalSince(start)
print("total,\(written),\(String(format: "%.2f", seconds)),\(Int(Double(written) / seconds))")
store.close()
