// libFuzzer target: Apple's notification path up to the verdict, as the public listener takes it:
// `NotificationVerifier` (the body's shape, the JWS's parts, the header, x5c's base64 and DER, the screen by
// name and date, the chain built by swift-certificates, the verdict cache, the JWS signature, the payload)
// with a fixed trusted root (the test chain in TestChain.swift) and no clock but the payload's signedDate.
//
// The first byte chooses what the rest is:
//   0 (mod 3)  the request body, as sent;
//   1          a payload: signed here with the test chain's leaf key, under a header with the test chain,
//              so that a payload the fuzzer shapes still carries a valid signature (the decoding after it
//              is reached);
//   2          a header: signed here, with a fixed valid payload (x5c, alg and their neighbours fuzzed).
//
// Checked, beyond "does not crash" (a trap in swift-certificates included):
// - the verdict is the same from a verifier without a cache, from one with a cache, and from that one
//   again (its cache now warm): a cached verdict is never another than a fresh one;
// - the screen refuses nothing a plain verification would take: `reference` below is the verification as
//   it was before the screen and the cache (parse everything, build the chain, check the signature), and
//   whatever it takes cryptographically, the verifier takes too, or refuses only for the payload's content
//   (malformed_payload, unknown_app, wrong_app_apple_id); whatever the verifier takes, it takes too.
import Crypto
import Foundation
import FuzzDriver
import LinkOutCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

private let apps = [AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890)]
private let fresh = try! NotificationVerifier(rootsPEM: [TestChain.rootPEM], apps: apps, verdictCacheCapacity: 0)
private let cached = try! NotificationVerifier(rootsPEM: [TestChain.rootPEM], apps: apps)
// swift-crypto's keys are not marked Sendable; this one is made once and only read (libFuzzer's thread).
nonisolated(unsafe) private let leafKey = try! P256.Signing.PrivateKey(pemRepresentation: TestChain.leafKeyPEM)
private let root = try! Certificate(pemEncoded: TestChain.rootPEM)

private func check(_ condition: Bool, _ rule: @autoclosure () -> String, _ bytes: [UInt8]) {
    if !condition {
        fatalError("fuzz-notification: \(rule()) — input \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)")
    }
}

private func base64URL(_ bytes: some Sequence<UInt8>) -> String {
    TokenBase64.encodeURLSafe(Array(bytes))
}

/// `{"signedPayload": "<header>.<payload>.<signature>"}`, signed with the test chain's leaf key.
private func signed(header: [UInt8], payload: [UInt8]) -> [UInt8] {
    let input = base64URL(header) + "." + base64URL(payload)
    let signature = (try? leafKey.signature(for: Array(input.utf8)).rawRepresentation) ?? Data()
    return Array(#"{"signedPayload":"\#(input).\#(base64URL(signature))"}"#.utf8)
}

private let validHeader = Array(#"{"alg":"ES256","x5c":["\#(TestChain.leaf)","\#(TestChain.intermediate)","\#(TestChain.root)"]}"#.utf8)
private let validPayload = Array(#"{"notificationType":"TEST","notificationUUID":"fuzz","signedDate":1798761600000,"version":"2.0"}"#.utf8)

private final class Box<T>: @unchecked Sendable { var value: T? }

/// Runs an async verification to its end on this (libFuzzer's) thread.
private func wait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let box = Box<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await work()
        done.signal()
    }
    done.wait()
    return box.value!
}

private func verdict(_ verifier: NotificationVerifier, _ body: [UInt8]) -> NotificationRefusal.Reason? {
    wait {
        do throws(NotificationRefusal) {
            _ = try await verifier.verify(body: body)
            return nil
        } catch {
            return error.reason
        }
    }
}

/// The verification without screen or cache, as it was: true when the body is a JWS whose chain leads from
/// its leaf through x5c[1] to the root at signedDate, with Apple's OIDs, and whose signature verifies.
private func reference(_ body: [UInt8]) -> Bool {
    guard case .object(let members)? = try? JSONValue.parse(body),
          case .string(let jws)? = members.first(where: { $0.key == "signedPayload" })?.value else { return false }
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let headerBytes = TokenBase64.decode(parts[0].utf8), let payloadBytes = TokenBase64.decode(parts[1].utf8),
          let signature = TokenBase64.decode(parts[2].utf8), signature.count == 64,
          case .object(let header)? = try? JSONValue.parse(headerBytes), case .object(let payload)? = try? JSONValue.parse(payloadBytes),
          case .string("ES256")? = header.first(where: { $0.key == "alg" })?.value,
          case .array(let x5c)? = header.first(where: { $0.key == "x5c" })?.value, x5c.count == 3,
          case .integer(let signedDate)? = payload.first(where: { $0.key == "signedDate" })?.value,
          // swift-certificates traps on a time past 9999 (rounded to the second): never asked.
          (0...253_402_300_799_000).contains(signedDate)
    else { return false }
    var certificates: [Certificate] = []
    for entry in x5c {
        guard case .string(let text) = entry, let der = TokenBase64.decode(text.utf8), let certificate = try? Certificate(derEncoded: der) else {
            return false
        }
        certificates.append(certificate)
    }
    let (leaf, intermediate) = (certificates[0], certificates[1])
    let time = Date(timeIntervalSince1970: Double(signedDate) / 1000)
    let chained: Bool = wait {
        var verifier = Verifier(rootCertificates: CertificateStore([root])) { RFC5280Policy(fixedExpiryValidationTime: time) }
        guard case .validCertificate(let chain) = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate])) else {
            return false
        }
        let path = Array(chain)
        return path.count == 3 && path[1] == intermediate
    }
    guard chained, intermediate.extensions[oid: NotificationVerifier.intermediateOID] != nil,
          leaf.extensions[oid: NotificationVerifier.leafOID] != nil,
          let key = P256.Signing.PublicKey(leaf.publicKey), let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
    else { return false }
    return key.isValidSignature(ecdsa, for: Array("\(parts[0]).\(parts[1])".utf8))
}

/// Refusals for what the payload says, after every cryptographic check passed.
private let payloadReasons: Set<NotificationRefusal.Reason> = [.malformedPayload, .unknownApp, .wrongAppAppleId]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = input.first else { return 0 }
    let rest = Array(input.dropFirst())
    let body: [UInt8] = switch mode % 3 {
    case 1: signed(header: validHeader, payload: rest)
    case 2: signed(header: rest, payload: validPayload)
    default: rest
    }
    let first = verdict(fresh, body)
    let warming = verdict(cached, body)
    let warm = verdict(cached, body)
    check(warming == first && warm == first, "verdicts differ: fresh \(String(describing: first)), cached \(String(describing: warming)) then \(String(describing: warm))", input)
    let taken = reference(body)
    if first == nil { check(taken, "the verifier took what the plain verification refuses", input) }
    if taken, let reason = first {
        check(payloadReasons.contains(reason), "refused (\(reason.rawValue)) what the plain verification takes", input)
    }
    return 0
}

@_cdecl("fuzz_notification_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}
