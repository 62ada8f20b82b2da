import AFNetworking
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// afn's exit statuses: curl's numbers wherever curl has one, so scripts
/// written for curl read them the same way.
///
/// | status | meaning                                                           | from                                             |
/// |--------|-------------------------------------------------------------------|--------------------------------------------------|
/// | 0      | success (also an HTTP error status without `-f/--fail`)            |                                                  |
/// | 1      | any other failure (cancelled, unexpected error)                   | everything not below                             |
/// | 2      | `afn batch` refused its list or manifest before touching anything  | the tool (a bad line, an unknown field or id, a cycle, an `out=` path outside `--output-dir`, two entries on one file, a corrupt manifest or one for another list or directory) |
/// | 3      | a line of `afn batch` input is not an http(s) URL                 | the tool                                         |
/// | 6      | cannot resolve the host                                           | NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed |
/// | 7      | cannot connect                                                    | NSURLErrorCannotConnectToHost, NSURLErrorNotConnectedToInternet |
/// | 8      | the server's reply is not valid HTTP                              | NSURLErrorBadServerResponse                      |
/// | 18     | partial file: the connection closed before the whole body arrived | curl's CURLE_PARTIAL_FILE (underlying error)     |
/// | 22     | HTTP status >= 400 with `-f/--fail`; always in `batch`, and for `get --resume` (nothing is saved) | the response |
/// | 23     | cannot write the output (a file; stdout whose reader left)        | the tool, NSURLErrorCannotWriteToFile/CreateFile/OpenFile |
/// | 26     | cannot read a local input file (`-d @FILE`, `-F name=@FILE`)      | the tool                                         |
/// | 28     | timed out (`--timeout` idle, `--max-time` total)                  | NSURLErrorTimedOut                               |
/// | 35     | the TLS handshake failed                                          | NSURLErrorSecureConnectionFailed                 |
/// | 47     | too many redirects (also more than `--max-redirs N`)              | NSURLErrorHTTPTooManyRedirects, the tool         |
/// | 52     | empty reply: the server closed without sending a response         | curl's CURLE_GOT_NOTHING (underlying error)      |
/// | 56     | the connection was lost / receive error                           | NSURLErrorNetworkConnectionLost                  |
/// | 58     | client certificate problem (unreadable, refused, required)        | NSURLErrorClientCertificateRejected/Required     |
/// | 60     | server certificate not trusted (trust store, host name, pins)     | NSURLErrorServerCertificate* (Untrusted, HasBadDate, HasUnknownRoot, NotYetValid) |
/// | 61     | the body's content encoding is invalid or damaged                 | NSURLErrorCannotDecodeContentData                |
/// | 64     | usage error: the subcommand's usage is printed                    | ArgumentParser's ValidationError                 |
/// | 77     | the `--cacert` file cannot be read or holds no certificate        | the tool                                         |
/// | 130    | `afn download` interrupted (resume data saved)                    | SIGINT / SIGTERM                                 |
///
/// Without `-f/--fail`, an HTTP error status is still a completed exchange:
/// the body is printed and the status is 0, as curl does. `afn download` keeps
/// its earlier rule: an HTTP error status fails the download with 1.
enum ExitStatus {
    static let success: Int32 = 0
    static let other: Int32 = 1
    /// curl's 2 is "failed to initialize": the batch did not begin.
    static let batchRefused: Int32 = 2
    static let badURL: Int32 = 3
    static let cannotResolveHost: Int32 = 6
    static let cannotConnect: Int32 = 7
    static let badServerResponse: Int32 = 8
    static let partialFile: Int32 = 18
    static let httpError: Int32 = 22
    static let writeError: Int32 = 23
    static let readError: Int32 = 26
    static let timedOut: Int32 = 28
    static let tlsHandshakeFailed: Int32 = 35
    static let tooManyRedirects: Int32 = 47
    static let emptyReply: Int32 = 52
    static let connectionLost: Int32 = 56
    static let clientCertificate: Int32 = 58
    static let serverCertificate: Int32 = 60
    static let badContentEncoding: Int32 = 61
    static let usage: Int32 = 64
    static let caCertificateFile: Int32 = 77
    static let interrupted: Int32 = 130

    /// The status for an error an operation or task ended with.
    static func status(for error: Error) -> Int32 {
        let error = error as NSError
        guard error.domain == NSURLErrorDomain else { return other }
        // curl's own code, kept underneath, tells apart what one URL error code covers.
        if let curl = error.userInfo[NSUnderlyingErrorKey] as? NSError, curl.domain == AFNetworkingCurlErrorDomain {
            switch curl.code {
            case 18: return partialFile
            case 52: return emptyReply
            case 61: return badContentEncoding
            default: break
            }
        }
        switch error.code {
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            return cannotResolveHost
        case NSURLErrorCannotConnectToHost, NSURLErrorNotConnectedToInternet:
            return cannotConnect
        case NSURLErrorBadServerResponse:
            return badServerResponse
        case NSURLErrorCannotWriteToFile, NSURLErrorCannotCreateFile, NSURLErrorCannotOpenFile:
            return writeError
        case NSURLErrorCannotDecodeContentData:
            return badContentEncoding
        case NSURLErrorTimedOut:
            return timedOut
        case NSURLErrorSecureConnectionFailed:
            return tlsHandshakeFailed
        case NSURLErrorHTTPTooManyRedirects:
            return tooManyRedirects
        case NSURLErrorNetworkConnectionLost:
            return connectionLost
        case NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired:
            return clientCertificate
        case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
             NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateNotYetValid:
            return serverCertificate
        default:
            return other
        }
    }

    /// The table as `afn --help` shows it.
    static let discussion = """
        Exit status (curl's numbers):
          0   success; an HTTP error status counts as success unless -f/--fail is given
          1   other failure
          2   (batch) the list or the manifest is refused; nothing was touched
          3   (batch) a line is not an http(s) URL
          6   cannot resolve host            7   cannot connect
          8   reply is not valid HTTP        18  partial file: the body was cut short
          22  HTTP status >= 400 with -f/--fail (always in batch)
          23  cannot write the output        26  cannot read an input file (-d @FILE, -F name=@FILE)
          28  timed out                      35  TLS handshake failed
          47  too many redirects (--max-redirs)  52  empty reply from the server
          56  connection lost / receive error    58  client certificate problem
          60  server certificate not trusted (trust, host name, pin)
          61  bad content encoding (damaged gzip, deflate, ...)
          64  usage error                    77  --cacert file unreadable or without a certificate
          130 download interrupted (resume data saved)
        """
}

/// A failure the tool itself detects: printed on stderr as `afn: <message>`,
/// then the process exits with `status`.
struct ToolFailure: Error {
    let status: Int32
    let message: String
}

/// Runs a subcommand's work and turns its outcome into the process's exit
/// status: a `ToolFailure` or any other error is printed on stderr first.
func exiting(with work: () throws -> Int32) throws {
    var status: Int32
    do {
        status = try work()
    } catch let failure as ToolFailure {
        Console.error(failure.message)
        status = failure.status
    } catch let exit as ExitCode {
        throw exit
    } catch {
        Console.error(error.localizedDescription)
        status = ExitStatus.status(for: error)
    }
    if status == ExitStatus.success, let code = Console.outputFailure {
        // The exchange went well but stdout did not take it (a reader that left: EPIPE).
        Console.error("cannot write the output: \(String(cString: strerror(code)))")
        status = ExitStatus.writeError
    }
    if status != ExitStatus.success { throw ExitCode(status) }
}
