// The SQLite store alone, no HTTP. Three modes:
//
//   linkout-writer-bench PATH TOTAL [BATCH] [SLICE]
//       commits batches of new tokens the way the writer thread does (synchronous=FULL, one transaction
//       per batch) and prints rows per second for each slice of the table's growth, so a slowdown as the
//       table outgrows its cache shows.
//   linkout-writer-bench compare DIR ROWS ROUNDS [RATE=1000]
//       the dashboard's bucket writes against none: per round and batch size (100, 1,000), ROWS realistic
//       visits into a store that writes buckets and ROWS into one that does not (the commit path before
//       schema 6), in alternating order; rows per second and the ratio. Visits are seen RATE a second
//       (simulated clock), so a batch spans the time it would take to fill at that traffic.
//   linkout-writer-bench sync PATH PRELOAD STEP ROUNDS [rising|pool]
//       the reporting sync's CPU and bytes written per visit once report_tokens holds PRELOAD tokens.
//   linkout-writer-bench fill PATH TOTAL BATCH DAYS
//       TOTAL realistic visits, each a new token, seen over the DAYS before now, through the writer's
//       commit (identity, buckets, refusals), then brought into reporting as the reporter does.
import Foundation
import LinkOutCore
import LinkOutStore

/// SplitMix64: a fast, seeded generator, so making ids costs next to nothing beside the store.
struct Random {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// 0..<bound
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// Random v4-style UUIDs: the worst case for an index, as real ids are.
let hex = Array("0123456789abcdef".utf8)
func randomID(_ random: inout Random) -> String {
    var bytes = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
    var bits = random.next()
    var used = 0
    for index in 0..<36 where index != 8 && index != 13 && index != 18 && index != 23 {
        if used == 16 {
            bits = random.next()
            used = 0
        }
        bytes[index] = hex[Int(bits & 0x0F)]
        bits >>= 4
        used += 1
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The links of bench/dashboard's config: four single-country links (nl with two weighted destinations) and
/// es with an experiment of two variants.
struct BenchLink {
    var id: String
    var country: String
    /// (url, weight, variant)
    var destinations: [(String, Int, String?)]
    var experiment: String?
    var share: Int
}
let benchLinks = [
    BenchLink(id: "nl", country: "nl", destinations: [("https://checkout.example.com/nl", 3, nil), ("https://checkout-b.example.com/nl", 1, nil)], experiment: nil, share: 35),
    BenchLink(id: "de", country: "de", destinations: [("https://checkout.example.com/de", 1, nil)], experiment: nil, share: 25),
    BenchLink(id: "at", country: "at", destinations: [("https://checkout.example.com/at?plan=annual", 1, nil)], experiment: nil, share: 10),
    BenchLink(id: "fr", country: "fr", destinations: [("https://checkout.example.com/fr", 1, nil)], experiment: nil, share: 15),
    BenchLink(id: "es", country: "es", destinations: [("https://checkout.example.com/es", 1, "control"), ("https://checkout.example.com/es?price=b", 1, "lower")], experiment: "price-test", share: 15),
]
let refusalReasons = ["malformed_token", "stale_token", "unknown_app"]

/// Visits as the gateway hands them to the writer: shoppers 85 %, prefetches 8 %, bots 5 %, HEADs 2 %;
/// links by share, destinations by weight; seen at a steady rate from `from` over `spanMs` for `total`
/// visits, each with a token made up to a minute before.
struct VisitSource {
    var random: Random
    let from: Int64
    let spanMs: Int64
    let total: Int
    var made = 0

    init(seed: UInt64, from: Int64, spanMs: Int64, total: Int) {
        random = Random(state: seed)
        self.from = from
        self.spanMs = spanMs
        self.total = total
    }

    mutating func batch(_ count: Int) -> (visits: [VisitRecord], extras: DashboardExtras) {
        var visits: [VisitRecord] = []
        visits.reserveCapacity(count)
        var extras = DashboardExtras()
        for _ in 0..<count {
            let seenAt = from + Int64(Double(made) / Double(max(total, 1)) * Double(spanMs))
            made += 1
            var pick = random.below(100)
            var link = benchLinks[0]
            for candidate in benchLinks {
                if pick < candidate.share { link = candidate; break }
                pick -= candidate.share
            }
            var weight = random.below(link.destinations.reduce(0) { $0 + $1.1 })
            var destination = link.destinations[0]
            for candidate in link.destinations {
                if weight < candidate.1 { destination = candidate; break }
                weight -= candidate.1
            }
            let roll = random.below(100)
            let kind: VisitKind = roll < 85 ? .shopper : roll < 93 ? .prefetch : roll < 98 ? .bot : .head
            let token = ExternalPurchaseToken(
                appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: seenAt - Int64(random.below(60_000)),
                externalPurchaseId: randomID(&random))
            visits.append(.token(TokenRecord(
                token: token, link: link.id, country: link.country, destination: destination.0, seenAt: seenAt, stale: false,
                kind: kind, experiment: kind == .shopper ? link.experiment : nil, variant: kind == .shopper ? destination.2 : nil)))
            // About one refused token per hundred visits, as the loops count them beside the batch.
            if random.below(100) == 0 {
                extras.addRefusal(link: link.id, reason: refusalReasons[random.below(refusalReasons.count)], at: seenAt)
            }
        }
        return (visits, extras)
    }
}

func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
let day: Int64 = 86_400_000
setvbuf(stdout, nil, _IOLBF, 0)
let arguments = CommandLine.arguments

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

if arguments.count >= 5, arguments[1] == "compare", let rows = Int(arguments[3]), let rounds = Int(arguments[4]) {
    let directory = arguments[2]
    let batchSizes = [100, 1000]
    // One store per arm and batch size, each fed the same visits (same seed).
    struct Arm {
        var store: SQLiteTokenStore
        var source: VisitSource
        var sequence: Int64 = 0
    }
    var arms: [String: Arm] = [:]
    let rate = arguments.count > 5 ? Double(arguments[5]) ?? 1000 : 1000
    let spanMs = Int64(Double(rows * rounds) / rate * 1000)
    let start = now() - spanMs
    for size in batchSizes {
        for buckets in [true, false] {
            let store = try SQLiteTokenStore(path: "\(directory)/\(buckets ? "buckets" : "plain")-\(size).sqlite")
            store.writesDashboardBuckets = buckets
            arms["\(buckets)-\(size)"] = Arm(store: store, source: VisitSource(seed: UInt64(size), from: start, spanMs: spanMs, total: rows * rounds))
        }
    }
    func run(_ key: String, _ size: Int) throws -> Double {
        var arm = arms[key]!
        // Visits are made before the clock starts: only the commits are timed.
        var batches: [(visits: [VisitRecord], extras: DashboardExtras)] = []
        var made = 0
        while made < rows {
            let count = min(size, rows - made)
            batches.append(arm.source.batch(count))
            made += count
        }
        let began = Date()
        for batch in batches {
            arm.sequence += 1
            try arm.store.commit(batch.visits, batch: BatchIdentity(instance: "bench", sequence: arm.sequence), extras: batch.extras, now: TimeSource.system.nowMs())
        }
        let seconds = Date().timeIntervalSince(began)
        arms[key] = arm
        return Double(rows) / seconds
    }
    print("visits seen \(rate) a second: \(String(format: "%.1f", Double(spanMs) / 86_400_000)) days of traffic per store")
    print("round,batch,with_buckets_rows_per_second,without_rows_per_second,ratio")
    var ratios: [Int: [Double]] = [:]
    var withRates: [Int: [Double]] = [:]
    var withoutRates: [Int: [Double]] = [:]
    for round in 1...rounds {
        for size in batchSizes {
            // A B, then B A: neither arm always runs first.
            var with = 0.0
            var without = 0.0
            if round % 2 == 1 {
                with = try run("true-\(size)", size)
                without = try run("false-\(size)", size)
            } else {
                without = try run("false-\(size)", size)
                with = try run("true-\(size)", size)
            }
            ratios[size, default: []].append(with / without)
            withRates[size, default: []].append(with)
            withoutRates[size, default: []].append(without)
            print("\(round),\(size),\(Int(with)),\(Int(without)),\(String(format: "%.3f", with / without))")
        }
    }
    for size in batchSizes {
        let r = ratios[size]!
        print("median,\(size),\(Int(median(withRates[size]!))),\(Int(median(withoutRates[size]!))),\(String(format: "%.3f", median(r))) (min \(String(format: "%.3f", r.min()!)), max \(String(format: "%.3f", r.max()!)))")
    }
    for arm in arms.values { arm.store.close() }
    exit(0)
}

if arguments.count >= 6, arguments[1] == "fill", let total = Int(arguments[3]), let size = Int(arguments[4]), let days = Int64(arguments[5]) {
    let path = arguments[2]
    let store = try SQLiteTokenStore(path: path)
    let end = now()
    var source = VisitSource(seed: 42, from: end - days * day, spanMs: days * day, total: total)
    var written = 0
    var sequence: Int64 = 0
    let began = Date()
    var sliceStart = Date()
    print("rows_before,rows_in_slice,seconds,rows_per_second")
    while written < total {
        let count = min(size, total - written)
        let batch = source.batch(count)
        sequence += 1
        try store.commit(batch.visits, batch: BatchIdentity(instance: "fill", sequence: sequence), extras: batch.extras, now: TimeSource.system.nowMs())
        written += count
        if written % 1_000_000 == 0 || written == total {
            let seconds = Date().timeIntervalSince(sliceStart)
            let rows = written % 1_000_000 == 0 ? 1_000_000 : written % 1_000_000
            print("\(written - rows),\(rows),\(String(format: "%.1f", seconds)),\(Int(Double(rows) / seconds))")
            sliceStart = Date()
        }
    }
    print("visits: \(written) in \(String(format: "%.1f", Date().timeIntervalSince(began))) s")
    store.close()
    // What the reporter (or the first /api/reporting) does: every visit's token into report_tokens.
    let syncStart = Date()
    let reporting = try SQLReportingStore(sqlitePath: path)
    try reporting.syncTokens()
    print("reporting sync: \(String(format: "%.1f", Date().timeIntervalSince(syncStart))) s")
    exit(0)
}

/// Bytes this process has handed to write(2) and pwrite(2) so far (`/proc/self/io`'s wchar).
func writtenBytes() -> Int64 {
    guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
        return Int64(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) ?? 0
    }
    return 0
}

/// CPU seconds of the whole process (the sync's thread and the store's checkpointer).
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

if arguments.count >= 6, arguments[1] == "sync", let preload = Int(arguments[3]), let step = Int(arguments[4]), let rounds = Int(arguments[5]) {
    // What bringing visits into reporting costs per visit once report_tokens is large: PRELOAD visits
    // committed and synced first, then ROUNDS of STEP visits committed and synced, each sync measured.
    // DATES (the sixth argument): "rising", each token made up to 5 s before its visit as StoreKit's are,
    // or "pool", one creation date for every token as bench/make-requests's pools have.
    let path = arguments[2]
    let pool = arguments.count > 6 && arguments[6] == "pool"
    let store = try SQLiteTokenStore(path: path)
    let reporting = try SQLReportingStore(sqlitePath: path)
    var random = Random(state: 7)
    let link = Link(id: "nl", path: "/nl", country: "nl", destinations: [Destination(url: "https://checkout.example.com/nl")])
    let start = now() - 3_600_000
    var made = 0
    var sequence: Int64 = 0
    func commit(_ count: Int) throws {
        var left = count
        while left > 0 {
            let size = min(1000, left)
            var batch: [VisitRecord] = []
            batch.reserveCapacity(size)
            for _ in 0..<size {
                // 45,000 visits a second, the strict row's peak.
                let seenAt = start + Int64(made / 45)
                made += 1
                let created = pool ? start : seenAt - Int64(random.below(5_000))
                let token = ExternalPurchaseToken(appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: created, externalPurchaseId: randomID(&random))
                batch.append(.token(TokenRecord(token: token, link: link, destination: link.destinations[0].url, seenAt: seenAt, stale: false)))
            }
            sequence += 1
            try store.commit(batch, batch: BatchIdentity(instance: "sync", sequence: sequence), extras: DashboardExtras(), now: TimeSource.system.nowMs())
            left -= size
        }
    }
    try commit(preload)
    try reporting.syncTokens()
    print("round,visits,seconds,cpu_us_per_visit,bytes_written_per_visit")
    var costs: [Double] = []
    for round in 1...rounds {
        try commit(step)
        let cpu = cpuSeconds()
        let bytes = writtenBytes()
        let began = Date()
        try reporting.syncTokens()
        let seconds = Date().timeIntervalSince(began)
        let perVisit = (cpuSeconds() - cpu) / Double(step) * 1e6
        costs.append(perVisit)
        print("\(round),\(step),\(String(format: "%.2f", seconds)),\(String(format: "%.1f", perVisit)),\((writtenBytes() - bytes) / Int64(step))")
    }
    print("median cpu per visit: \(String(format: "%.1f", median(costs))) us")
    exit(0)
}

guard arguments.count >= 3, let total = Int(arguments[2]) else {
    print("usage: linkout-writer-bench STORE_PATH TOTAL_ROWS [BATCH=1000] [SLICE=500000]")
    print("       linkout-writer-bench compare DIR ROWS_PER_RUN ROUNDS")
    print("       linkout-writer-bench fill STORE_PATH TOTAL BATCH DAYS")
    exit(2)
}
let path = arguments[1]
let batchSize = arguments.count > 3 ? Int(arguments[3]) ?? 1000 : 1000
let slice = arguments.count > 4 ? Int(arguments[4]) ?? 500_000 : 500_000

let store = try SQLiteTokenStore(path: path)
let link = Link(id: "nl", path: "/nl", country: "nl", destinations: [Destination(url: "https://checkout.example.com/nl")])
var random = Random(state: 0x1234_5678_9ABC_DEF0)

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
        let token = ExternalPurchaseToken(appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: now, externalPurchaseId: randomID(&random))
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
