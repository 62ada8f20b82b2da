import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import XCTest

// Helpers shared by the suites in Modern/ (async/await, retries, deadlines,
// metrics, logging, mutual TLS, private CAs, the error view). Every name is
// prefixed `Modern` so nothing clashes with the rest of the test target.

/// Thrown by `modernBounded` when the body did not finish in time.
struct ModernTimeout: Error, CustomStringConvertible {
    let seconds: TimeInterval
    var description: String { "the test body did not finish within \(seconds) s" }
}

/// Runs `body` in a task of its own and waits for it at most `seconds`.
///
/// Unlike a task group, this returns on time even when `body` ignores its
/// cancellation (a request that never calls back): the body's task is
/// cancelled and left behind, and the test fails with `ModernTimeout`.
/// Errors `body` throws are rethrown unchanged.
func modernBounded<T: Sendable>(_ seconds: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line,
                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let work = Task { try await body() }
    let gate = ModernOnce<Result<T, Error>>()
    let result: Result<T, Error> = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Error>, Never>) in
        gate.arm(continuation)
        Task {
            let outcome = await work.result
            gate.deliver(outcome)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            if gate.deliver(.failure(ModernTimeout(seconds: seconds))) { work.cancel() }
        }
    }
    if case .failure(let error) = result, error is ModernTimeout {
        XCTFail("\(error)", file: file, line: line)
    }
    return try result.get()
}

/// Resumes a continuation once, with whichever result comes first.
final class ModernOnce<Value: Sendable>: @unchecked Sendable {
    // @unchecked: the mutable fields are only touched under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, Never>?
    private var pending: Value?
    private var done = false

    func arm(_ continuation: CheckedContinuation<Value, Never>) {
        lock.lock()
        if let pending {
            done = true
            self.pending = nil
            lock.unlock()
            continuation.resume(returning: pending)
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    /// True for the value that won.
    @discardableResult
    func deliver(_ value: Value) -> Bool {
        lock.lock()
        guard !done, pending == nil else {
            lock.unlock()
            return false
        }
        guard let continuation else {
            pending = value
            lock.unlock()
            return true
        }
        done = true
        self.continuation = nil
        lock.unlock()
        continuation.resume(returning: value)
        return true
    }
}

/// Polls `condition` every 10 ms for at most `timeout` seconds (without
/// blocking a thread) and returns its last value.
func modernEventually(_ timeout: TimeInterval = 10, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() && Date() < deadline {
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

/// Sleeps without blocking a thread (and without throwing on cancellation).
func modernSleep(_ seconds: TimeInterval) async {
    try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
}

enum ModernSupport {
    /// A completion queue of its own, so nothing depends on the main queue being served.
    static func completionQueue(_ name: String = "modern") -> DispatchQueue {
        DispatchQueue(label: "afn.tests.\(name).completion")
    }

    /// Accepts any certificate for any host: for the tests' own self-signed servers.
    static func permissivePolicy() -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: .none)
        policy.allowInvalidCertificates = true
        policy.validatesDomainName = false
        return policy
    }

    /// The DER certificates of a PEM file (or text), in order.
    static func derCertificates(fromPEM text: String) -> [Data] {
        var certificates: [Data] = []
        var body: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if line == "-----END CERTIFICATE-----" {
                if let base64 = body, let der = Data(base64Encoded: base64) { certificates.append(der) }
                body = nil
            } else if body != nil {
                body! += line
            }
        }
        return certificates
    }

    static func derCertificates(fromPEMFile path: String) -> [Data] {
        derCertificates(fromPEM: (try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
    }

    /// The JSON object of a response body, or [:].
    static func jsonObject(_ object: Any?) -> [String: Any] {
        if let dictionary = object as? [String: Any] { return dictionary }
        if let data = object as? Data, let parsed = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            return parsed
        }
        return [:]
    }

    /// `object[key]` as a `[String: String]` (httpbin's `args`, `form`, `files`).
    static func strings(_ object: Any?, _ key: String) -> [String: String] {
        (jsonObject(object)[key] as? [String: Any])?.compactMapValues { $0 as? String } ?? [:]
    }

    /// Deterministic bytes, different for different `salt`s.
    static func pattern(_ count: Int, salt: UInt8 = 0) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 7)) &+ salt })
    }

    /// A path in the temporary directory (not created).
    static func temporaryURL(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("afn-modern-\(name)-\(UUID().uuidString)")
    }
}

// MARK: - Logging

/// One record a `ModernLogRecorder` received.
struct ModernLogRecord: Sendable, CustomStringConvertible {
    let level: Logger.Level
    let message: String
    let metadata: [String: String]
    /// The name of the thread the handler was called on.
    var threadName: String? = nil

    var description: String { "[\(level)] \(message) \(metadata)" }

    /// The message and every metadata value, for "this never appears anywhere" checks.
    var allText: String { ([message] + metadata.map { "\($0.key)=\($0.value)" }).joined(separator: " ") }
}

/// A swift-log destination that keeps every record in a lock-protected array.
final class ModernLogRecorder: Sendable {
    private let storage = Locked<[ModernLogRecord]>([])

    var records: [ModernLogRecord] { storage.value }

    func append(_ record: ModernLogRecord) { storage.append(record) }

    /// The records whose message contains `text`.
    func lines(containing text: String) -> [ModernLogRecord] {
        records.filter { $0.message.contains(text) }
    }

    /// A logger writing here, at `level` and above.
    func logger(label: String = "afn.tests.modern", level: Logger.Level = .trace) -> Logger {
        Logger(label: label, factory: { _ in ModernLogHandler(recorder: self, logLevel: level) })
    }
}

/// The `LogHandler` behind `ModernLogRecorder.logger(label:level:)`.
struct ModernLogHandler: LogHandler {
    let recorder: ModernLogRecorder
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    init(recorder: ModernLogRecorder, logLevel: Logger.Level) {
        self.recorder = recorder
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        for (key, value) in event.metadata ?? [:] { merged[key] = value }
        recorder.append(ModernLogRecord(level: event.level, message: event.message.description,
                                        metadata: merged.mapValues { "\($0)" }, threadName: Thread.current.name))
    }
}
