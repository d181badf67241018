import Foundation
import X509

/// The roots a notification's chain must end at, and the checks that need their names but no signature:
/// what can be refused by comparing certificates' fields, before swift-certificates verifies a signature.
///
/// Each check refuses only what the full verification would refuse too (so a genuine notification is never
/// turned away by it), which is why the comparisons are the ones swift-certificates' path building makes:
/// it looks an issuer up by its subject name alone (the authority key identifier only orders candidates),
/// so an intermediate whose issuer names no configured root, or a leaf whose issuer is not the
/// intermediate's subject, cannot chain leaf → x5c[1] → root whatever its signatures.
struct NotificationRoots: Sendable {
    let certificates: [Certificate]

    /// Certificate validity times are whole seconds and swift-certificates compares at sub-second precision:
    /// the cheap validity check and the verdict cache's window stay this far inside the boundaries, so a
    /// rounding difference can never make them disagree with the full check.
    static let marginMs: Int64 = 1000

    init(_ certificates: [Certificate]) {
        self.certificates = certificates
    }

    /// Refuses an intermediate that cannot lead to a configured root, by its issuer's name, or that lacks
    /// Apple's marker extension: a verdict that holds at any time.
    func screenIntermediate(_ intermediate: Certificate) throws(NotificationRefusal) {
        guard certificates.contains(where: { $0.subject == intermediate.issuer }) else {
            throw NotificationRefusal(.untrustedChain, "x5c[1]'s issuer is none of the trusted roots")
        }
        guard intermediate.extensions[oid: NotificationVerifier.intermediateOID] != nil else {
            throw NotificationRefusal(.intermediateOIDMissing, "the intermediate lacks Apple's OID 1.2.840.113635.100.6.2.1")
        }
    }

    /// Refuses a leaf the intermediate did not issue, by name, or that lacks Apple's marker extension: a
    /// verdict that holds at any time.
    func screenLeaf(_ leaf: Certificate, issuedBy intermediate: Certificate) throws(NotificationRefusal) {
        guard leaf.issuer == intermediate.subject else {
            throw NotificationRefusal(.untrustedChain, "the leaf's issuer is not x5c[1]'s subject")
        }
        guard leaf.extensions[oid: NotificationVerifier.leafOID] != nil else {
            throw NotificationRefusal(.leafOIDMissing, "the leaf lacks Apple's OID 1.2.840.113635.100.6.11.1")
        }
    }

    /// Refuses a chain whose leaf or intermediate is not valid at `signedDate` (a verdict for that time only).
    func screenDates(leaf: Certificate, intermediate: Certificate, signedDate: Int64) throws(NotificationRefusal) {
        for (name, certificate) in [("leaf", leaf), ("x5c[1]", intermediate)] {
            let (from, until) = (Self.ms(certificate.notValidBefore), Self.ms(certificate.notValidAfter))
            if signedDate < from - Self.marginMs || signedDate > until + Self.marginMs {
                throw NotificationRefusal(.untrustedChain, "the \(name) is not valid at signedDate \(signedDate)")
            }
        }
    }

    /// The times (Unix ms) at which no certificate a path leaf → intermediate → root can hold changes its
    /// validity: inside it, the verdict on these certificates is the same at any `signedDate`. Nil when
    /// there is no such time (validity periods that do not overlap).
    func window(leaf: Certificate, intermediate: Certificate) -> ClosedRange<Int64>? {
        let candidates = [leaf, intermediate] + certificates.filter { $0.subject == intermediate.issuer || $0.subject == leaf.issuer }
        var lower = Int64.min
        var upper = Int64.max
        for certificate in candidates {
            lower = max(lower, Self.ms(certificate.notValidBefore) + Self.marginMs)
            upper = min(upper, Self.ms(certificate.notValidAfter) - Self.marginMs)
        }
        return lower <= upper ? lower...upper : nil
    }

    /// Unix ms of a certificate time. Certificate times are years 0 to 9999 (ASN.1's GeneralizedTime), so
    /// within ±3.2e14 ms: no arithmetic on them here can overflow.
    static func ms(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
