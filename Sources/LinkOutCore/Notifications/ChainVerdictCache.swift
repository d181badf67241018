import Crypto
import Foundation

/// Verdicts on x5c chains already judged, so each chain's certificates are parsed and its signatures
/// checked once: Apple signs every notification with one of a few leaf certificates, and a forger who
/// repeats a chain costs a hash and a look-up. Keyed by the SHA-256 of the three certificates' DER bytes;
/// bounded (the oldest verdict is forgotten first), so a flood of distinct chains can only evict.
///
/// A verdict holds only inside its `window`: the times at which none of the certificates it rests on
/// changes validity (`NotificationRoots.window`). A notification signed outside it is judged afresh.
///
/// Shared by the loop threads (which read it before queueing a notification) and the intake thread (which
/// adds what it verified): the one lock in the core, held for a dictionary look-up. An `NSLock`, which
/// ThreadSanitizer sees (`make test-tsan`).
final class ChainVerdictCache: @unchecked Sendable {
    /// The SHA-256 of a chain's certificates, as four words (hashed and compared without an array).
    struct Key: Hashable, Sendable {
        let words: (UInt64, UInt64, UInt64, UInt64)

        init(_ certificates: [[UInt8]]) {
            var hasher = SHA256()
            for der in certificates {
                // Each length first, so that the boundary between two certificates is part of the key.
                var length = UInt64(der.count).bigEndian
                withUnsafeBytes(of: &length) { hasher.update(bufferPointer: $0) }
                hasher.update(data: der)
            }
            words = hasher.finalize().withUnsafeBytes { bytes in
                (
                    bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                    bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
                )
            }
        }

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.words == rhs.words }

        func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
        }
    }

    enum Verdict: Sendable {
        /// The chain verified: the leaf's key, for the JWS signature.
        case trusted(LeafKey)
        case refused(NotificationRefusal)
    }

    /// A verified leaf's public key. swift-crypto does not mark its keys `Sendable`; this one is immutable
    /// once made (a BoringSSL key only ever read by verification), so sharing it between threads is safe.
    struct LeafKey: @unchecked Sendable {
        let key: P256.Signing.PublicKey
    }

    private struct Entry {
        var verdict: Verdict
        var window: ClosedRange<Int64>
    }

    let capacity: Int
    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    /// Keys in the order they were added, as a ring: `order[next]` is the oldest once the ring is full.
    private var order: [Key] = []
    private var next = 0

    /// - Parameter capacity: verdicts kept; 0 keeps none.
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The verdict on the chain `key` for a notification signed at `signedDate`, if one is known.
    func verdict(_ key: Key, at signedDate: Int64) -> Verdict? {
        guard capacity > 0 else { return nil }
        return lock.withLock {
            guard let entry = entries[key], entry.window.contains(signedDate) else { return nil }
            return entry.verdict
        }
    }

    /// Keeps `verdict`, reached at `signedDate`, for the chain `key`; only when `signedDate` is inside
    /// `window` (outside it, the verdict may hang on a certificate's validity at that time).
    func remember(_ key: Key, _ verdict: Verdict, window: ClosedRange<Int64>?, signedDate: Int64) {
        guard capacity > 0, let window, window.contains(signedDate) else { return }
        lock.withLock {
            if entries[key] != nil {
                entries[key] = Entry(verdict: verdict, window: window)
                return
            }
            if order.count < capacity {
                order.append(key)
            } else {
                entries[order[next]] = nil
                order[next] = key
                next = (next + 1) % capacity
            }
            entries[key] = Entry(verdict: verdict, window: window)
        }
    }

    var count: Int { lock.withLock { entries.count } }
}
