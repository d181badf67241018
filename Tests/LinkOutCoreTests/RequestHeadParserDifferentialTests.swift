import Foundation
import LinkOutTestSupport
import Testing

@testable import LinkOutCore

/// h11 (Python's HTTP/1.1 library, 0.16) as a second opinion on the parser: whatever h11 refuses, the
/// parser must refuse too. h11 judges the fuzz seeds (`fuzz/corpus/head/`) and its script's own list of
/// hostile requests (`Tests/LinkOutIntegrationTests/Support/differential_h11.py`, written to a scratch
/// folder by `--generate`); nothing of the parser runs in Python.
@Suite("request head parser against h11")
struct RequestHeadParserDifferentialTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Heads h11 accepts and the parser refuses, by file name: where the parser is stricter on purpose.
    /// h11 takes a bare LF as a line end, unfolds obs-fold, accepts any method token, any target form and
    /// any `HTTP/D.D`, lets controls other than NUL, CR and LF into values, reads a complete head however
    /// long, leaves Host's syntax alone, takes `Transfer-Encoding: chunked` and a repeated Content-Length
    /// of one value, and lets single-value headers repeat.
    static let stricter: [String: HeadProblem] = [
        "20kb-header": .headTooLarge,
        "20kb-target": .targetTooLong,
        "3000-headers": .headTooLarge,
        "absolute-form-other-scheme": .unsupportedTargetForm,
        "absolute-form-user-info": .unsupportedTargetForm,
        "asterisk-target": .unsupportedTargetForm,
        "authorization-twice": .duplicateHeader,
        "bare-lf": .bareLF,
        "bare-lf-end": .bareLF,
        "bare-lf-one-header": .bareLF,
        "chunked-post": .transferEncoding,
        "cl-19-digits": .invalidContentLength,
        "cl-list": .invalidContentLength,
        "cl-twice": .duplicateContentLength,
        "connect-elsewhere": .unsupportedTargetForm,
        "content-type-twice": .duplicateHeader,
        "control-in-value": .controlCharacterInHeader,
        "del-in-value": .controlCharacterInHeader,
        "encoded-slash": .unsupportedTargetForm,
        "host-with-at": .badHost,
        "host-with-slash": .badHost,
        "host-with-space": .badHost,
        "http-1-2": .unsupportedVersion,
        "http-2-0": .unsupportedVersion,
        "long-method": .unknownMethod,
        "lower-case-method": .unknownMethod,
        "obs-fold": .obsFold,
        "obs-fold-hiding-te": .obsFold,
        "obs-fold-tab": .obsFold,
        "sec-purpose-twice": .duplicateHeader,
        "te-and-cl": .transferEncoding,
        "te-chunked-get": .transferEncoding,
        "unknown-method": .unknownMethod,
        "user-agent-twice": .duplicateHeader,
    ]

    /// Heads h11 refuses and the parser still waits on (it must refuse or wait, never accept): none.
    static let refusedByH11IncompleteHere: Set<String> = []

    struct Verdict: Decodable {
        var file: String
        var accepted: Bool
        var verdict: String
        var detail: String
    }

    /// h11's verdicts on the seeds and the generated hostile requests, with each file's bytes.
    static func verdicts() throws -> [(Verdict, [UInt8])] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-h11-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let script = packageRoot.appendingPathComponent("Tests/LinkOutIntegrationTests/Support/differential_h11.py").path
        let corpus = packageRoot.appendingPathComponent("fuzz/corpus/head").path
        let result = try Command.python([script, "--generate", scratch.path, corpus, scratch.path])
        try #require(result.status == 0, "differential_h11.py failed (h11 installed? pip install h11): \(result.stderr)")
        return try result.stdout.split(separator: UInt8(ascii: "\n")).map {
            let verdict = try JSONDecoder().decode(Verdict.self, from: Data($0))
            return (verdict, try [UInt8](Data(contentsOf: URL(fileURLWithPath: verdict.file))))
        }
    }

    @Test func whateverH11RefusesIsRefused() throws {
        let verdicts = try Self.verdicts()
        #expect(verdicts.count > 100, "the seeds and the generated requests")
        var stricter: [String: HeadProblem] = [:]
        var incompleteHere: Set<String> = []
        for (verdict, bytes) in verdicts {
            let name = URL(fileURLWithPath: verdict.file).lastPathComponent
            var parser = RequestHeadParser()
            let outcome = bytes.withUnsafeBytes { parser.parse($0) }
            switch (verdict.verdict, outcome) {
            case ("request", .refused(let problem)):
                stricter[name] = problem
            case ("request", .incomplete):
                Issue.record("\(name): h11 read a request, the parser waits for more")
            case ("error", .head):
                Issue.record("\(name): h11 refuses (\(verdict.detail)), the parser accepts")
            case ("error", .incomplete):
                incompleteHere.insert(name)
            case ("need_data", .head):
                Issue.record("\(name): h11 waits for more, the parser accepts")
            case ("request", .head), ("error", .refused), ("need_data", _):
                break
            default:
                Issue.record("\(name): h11's verdict \(verdict.verdict)")
            }
        }
        #expect(stricter == Self.stricter, "where the parser is stricter than h11")
        #expect(incompleteHere == Self.refusedByH11IncompleteHere)
    }
}
