import AFNetworking
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `afn batch`: GETs every URL of a list, `-j` at a time, as a `ResumableBatch`
/// (a `RequestGraph` underneath): `after=` dependencies, bodies saved under
/// `--output-dir`, a `--manifest` that lets a killed batch continue
/// (`--resume`), `--limit-rate` for the whole batch. A one-line progress on
/// stderr while they run, then a summary (a table, or JSON lines with
/// `--json`) on stdout in input order.
struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch many URLs concurrently, in dependency order, and summarize the outcome; a killed batch can be resumed.",
        discussion: """
            The list is FILE, --file FILE or stdin ('-', the default). Each line is a URL (without a scheme: http), then optional \
            whitespace-separated fields: id=NAME, after=NAME[,NAME...] (start only after these succeeded), out=RELATIVE/PATH \
            (where --output-dir saves the body). A line whose first non-blank character is # is a comment; blank lines are \
            skipped; a bare URL line works as before. An unknown field, an after= id no line has, a repeated id, a cycle, an \
            out= path leaving the output directory, a URL naming no file (without out=) or two lines on one file: exit 2, \
            nothing sent.

            Without --output-dir bodies are counted, not saved. With it, each body goes to out= or the URL's last path \
            component, through FILE.partial and FILE.partial.json (continued with Range on the next run); a file afn did not \
            make is never written over (that line fails with 23). --manifest M records which lines are done and which partial \
            files belong to which, with the list's SHA-256 and the output directory, rewritten atomically as lines end; it must \
            not exist yet. --resume M continues after the process was stopped or killed: done lines are not sent again, partial \
            files are continued; a missing M starts the batch. A corrupt manifest, or one written for other list content or \
            another --output-dir, is refused with exit 2 and nothing touched.

            A URL fails on a transport error or an HTTP status >= 400; a line whose dependency did not succeed is skipped \
            (nothing sent). OUTCOME: done, resumed-as-done (done in an earlier run), failed, skipped, cancelled. \
            Exit status: 0 when every line succeeded, otherwise the status (see 'afn --help') of the first line in input \
            order that did not: a failed line's own (22 for an HTTP status >= 400, 3 not a URL, 23 cannot write the file...), \
            a skipped line's the one of the failed line it waited for.
            """
    )

    @Argument(help: ArgumentHelp("The list ('-': stdin, the default).", valueName: "file"))
    var list: String?

    // No short name: -f is --fail in every command (curl's meaning).
    @Option(name: .customLong("file"), help: ArgumentHelp("Read the list from this file ('-': stdin); the same as FILE.", valueName: "file"))
    var file: String?

    @Flag(name: .shortAndLong, help: "Accepted for curl's spelling: a batch always fails a URL on an HTTP status >= 400 (exit 22).")
    var fail = false

    @Option(name: [.customShort("j"), .customLong("jobs")], help: "How many requests run at once.")
    var jobs = 4

    @Flag(help: "Print the summary as JSON lines (url, id, status, bytes, time in seconds, outcome, file, resumedFrom, error, exitCode).")
    var json = false

    @Option(name: .customLong("output-dir"), help: ArgumentHelp("Save each body in this directory (made if missing).", valueName: "dir"))
    var outputDirectory: String?

    @Option(help: ArgumentHelp("Keep the batch's state in this file (which must not exist yet).", valueName: "file"))
    var manifest: String?

    @Option(help: ArgumentHelp("Continue the batch this manifest describes (implies --manifest; a missing file starts it).",
                               valueName: "file"))
    var resume: String?

    @Option(name: .customLong("limit-rate"), help: CurlSpelling.limitRateHelp)
    var limitRate: String?

    @OptionGroup(title: "Request") var request: RequestOptions
    @OptionGroup(title: "TLS") var tls: TLSOptions

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("-j must be at least 1") }
        if list != nil, file != nil { throw ValidationError("give the list once: FILE or --file FILE") }
        if let path = listPath, path != "-", !FileManager.default.isReadableFile(atPath: path) {
            throw ValidationError("cannot read the URL list \(path)")
        }
        // `--resume M` implies `--manifest M`: naming M twice is fine, two files are not.
        if let manifest, let resume, manifest != resume {
            throw ValidationError("--resume M keeps the state in M: --manifest must name the same file or be left out")
        }
        if let limitRate, CurlSpelling.rate(limitRate) == nil {
            throw ValidationError("--limit-rate takes bytes per second, as curl spells them (100K, 1M): \(limitRate)")
        }
    }

    /// FILE or --file.
    private var listPath: String? { list ?? file }

    func run() throws {
        try exiting {
            let content = try readList()
            let lines: [ResumableBatchList.Line]
            do {
                lines = try ResumableBatchList.parse(String(decoding: content, as: UTF8.self))
            } catch let error as ResumableBatchError {
                throw ToolFailure(status: ExitStatus.batchRefused, message: error.message)
            }
            guard !lines.isEmpty else { throw ToolFailure(status: ExitStatus.usage, message: "no URLs to fetch") }
            if resume == nil, let manifest, FileManager.default.fileExists(atPath: manifest) || (try? FileManager.default.destinationOfSymbolicLink(atPath: manifest)) != nil {
                throw ToolFailure(status: ExitStatus.batchRefused,
                                  message: "the manifest \(manifest) exists: continue that batch with --resume \(manifest), or remove it")
            }
            let run = BatchRun(lines: lines, content: content, jobs: jobs, request: request, tls: tls,
                               outputDirectory: outputDirectory, manifest: resume ?? manifest,
                               bytesPerSecond: limitRate.flatMap(CurlSpelling.rate) ?? 0)
            let results = try run.run()
            BatchReport.print(results, json: json)
            return results.first { $0.exitCode != ExitStatus.success }?.exitCode ?? ExitStatus.success
        }
    }

    /// The list's bytes (their SHA-256 is what a manifest records).
    private func readList() throws -> Data {
        guard let path = listPath, path != "-" else { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw ToolFailure(status: ExitStatus.readError, message: "cannot read \(path)")
        }
        return contents
    }
}
