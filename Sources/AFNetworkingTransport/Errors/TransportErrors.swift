import CAFCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The libcurl → `NSURLErrorDomain` table. Every CURLcode an HTTP(S) transfer
/// can end with has a row; codes the library caused itself (aborts from its
/// own callbacks) are resolved from the transfer's `AbortReason` first, so a
/// cancelled or timed-out transfer never surfaces as "unknown".
package enum TransportErrors {
    /// Domain of the underlying error that keeps curl's own code and message.
    package static let curlErrorDomain = "AFNetworkingCurlErrorDomain"

    package static func error(for code: CURLcode, abortReason: AbortReason?, url: URL?, curlMessage: String?, tlsVerifyResult: Int = 0) -> NSError {
        if let abortReason {
            switch abortReason {
            case .cancelled:
                return make(NSURLErrorCancelled, url: url, underlying: nil)
            case .timedOut:
                return make(NSURLErrorTimedOut, url: url, underlying: nil)
            case .failed(let failure):
                return failure
            case .bodyStreamFailed(let failure):
                return make(NSURLErrorRequestBodyStreamExhausted, url: url, underlying: failure,
                            description: failure?.localizedDescription ?? localizedDescription(for: NSURLErrorRequestBodyStreamExhausted))
            case .badServerResponse(let reason):
                return make(NSURLErrorBadServerResponse, url: url, underlying: nil, description: reason)
            case .certificateRejected(let rejection):
                return rejection.nsError(failingURL: url)
            }
        }
        let underlying = NSError(domain: curlErrorDomain, code: Int(code.rawValue), userInfo: [
            NSLocalizedDescriptionKey: curlMessage ?? curl_easy_strerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)",
        ])
        let urlCode = urlErrorCode(for: code, tlsVerifyResult: tlsVerifyResult)
        let description = tlsDescription(forURLErrorCode: urlCode, curlCode: code, verifyResult: tlsVerifyResult,
                                         curlMessage: curlMessage) ?? specificDescription(for: code)
        return make(urlCode, url: url, underlying: underlying, description: description)
    }

    /// Where one URL error code covers several of curl's, the message says
    /// which one happened (curl's own words stay in the underlying error).
    package static func specificDescription(for code: CURLcode) -> String? {
        switch code {
        case CURLE_PARTIAL_FILE:
            return "The connection closed before the whole response body arrived."
        case CURLE_GOT_NOTHING:
            return "The server closed the connection without sending a response."
        case CURLE_BAD_CONTENT_ENCODING:
            return "The response body could not be decoded: its Content-Encoding is invalid or damaged."
        case CURLE_WEIRD_SERVER_REPLY:
            return "The server's reply is not valid HTTP."
        default:
            return nil
        }
    }

    /// curl's code, corrected where curl's category misleads for HTTP:
    /// - a reply that is not HTTP at all is "unsupported protocol" to curl
    ///   (it refuses HTTP/0.9), also after an interim 100 Continue: curl only
    ///   ever gets http(s) URLs (`RequestValidation`), so it is a bad server response;
    /// - a write error curl reports although our callbacks recorded no abort
    ///   comes from curl's own content decoder (a damaged gzip stream, data
    ///   after its end): the body cannot be decoded, nothing was cancelled;
    /// - a malformed chunked body is a receive error to curl: it is a bad
    ///   server response, not a lost connection;
    /// - a header line over curl's own limit is "out of memory" to curl: while
    ///   the head is still arriving (or before its status line, a line curl
    ///   refuses before the callback sees it), that is the server's fault.
    /// - a TLS alert from a server that refused the client certificate sent
    ///   (or demanded one that was not sent) is a handshake failure to curl:
    ///   it is the client certificate's problem.
    package static func refine(_ code: CURLcode, curlMessage: String?, headInProgress: Bool, gotStatus: Bool,
                               presentedClientCertificate: Bool = false) -> CURLcode {
        // (With TLS 1.3 the server's verdict comes after the handshake, so its
        // alert can surface on the first read or write.)
        if [CURLE_SSL_CONNECT_ERROR, CURLE_RECV_ERROR, CURLE_SEND_ERROR].contains(code), let message = curlMessage?.lowercased(),
           message.contains("alert") {
            if message.contains("certificate required") { return CURLE_SSL_CLIENTCERT }
            let refusals = ["bad certificate", "unknown ca", "certificate unknown", "access denied", "certificate revoked",
                            "certificate expired", "unsupported certificate", "decrypt error"]
            if presentedClientCertificate, refusals.contains(where: message.contains) { return CURLE_SSL_CERTPROBLEM }
            // (TLS 1.2 servers answer a missing certificate with a generic
            // handshake-failure alert, which says too little to be told apart.)
        }
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL:
            return CURLE_WEIRD_SERVER_REPLY
        case CURLE_WRITE_ERROR:
            return CURLE_BAD_CONTENT_ENCODING
        case CURLE_RECV_ERROR where curlMessage?.contains("chunked-encoding") == true,
             CURLE_RECV_ERROR where curlMessage?.contains("response headers") == true:
            return CURLE_WEIRD_SERVER_REPLY
        case _ where curlMessage?.contains("chunked-encoded stream") == true:
            // A trailer line that is no header field, refused by curl's own
            // header store (as "bad function argument"): the server's fault.
            return CURLE_WEIRD_SERVER_REPLY
        // curl's answer to a header line over its limit (100 KB), also a
        // status line, before the callback has seen any line of the head.
        case CURLE_OUT_OF_MEMORY where headInProgress || !gotStatus:
            return CURLE_WEIRD_SERVER_REPLY
        default:
            return code
        }
    }

    /// One row per CURLcode that HTTP(S) can produce.
    package static func urlErrorCode(for code: CURLcode, tlsVerifyResult: Int = 0) -> Int {
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_NOT_BUILT_IN:
            return NSURLErrorUnsupportedURL
        case CURLE_URL_MALFORMAT:
            return NSURLErrorBadURL
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return NSURLErrorCannotFindHost
        case CURLE_COULDNT_CONNECT, CURLE_PROXY:
            return NSURLErrorCannotConnectToHost
        case CURLE_OPERATION_TIMEDOUT:
            return NSURLErrorTimedOut
        case CURLE_TOO_MANY_REDIRECTS:
            return NSURLErrorHTTPTooManyRedirects
        case CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_SSL_SHUTDOWN_FAILED,
             CURLE_UNRECOVERABLE_POLL, CURLE_AGAIN:
            return NSURLErrorNetworkConnectionLost
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_RANGE_ERROR, CURLE_UPLOAD_FAILED,
             CURLE_HTTP3, CURLE_HTTP_RETURNED_ERROR:
            return NSURLErrorBadServerResponse
        case CURLE_BAD_CONTENT_ENCODING:
            return NSURLErrorCannotDecodeContentData
        case CURLE_FILESIZE_EXCEEDED:
            return NSURLErrorDataLengthExceedsMaximum
        case CURLE_SEND_FAIL_REWIND, CURLE_READ_ERROR:
            return NSURLErrorRequestBodyStreamExhausted
        case CURLE_WRITE_ERROR, CURLE_ABORTED_BY_CALLBACK:
            // Only reached when no AbortReason was recorded: still our own abort.
            return NSURLErrorCancelled
        case CURLE_PEER_FAILED_VERIFICATION:
            return certificateErrorCode(forVerifyResult: tlsVerifyResult)
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_CRL_BADFILE:
            return NSURLErrorServerCertificateUntrusted
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
             CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            return NSURLErrorSecureConnectionFailed
        case CURLE_SSL_CERTPROBLEM:
            return NSURLErrorClientCertificateRejected
        case CURLE_SSL_CLIENTCERT:
            return NSURLErrorClientCertificateRequired
        case CURLE_LOGIN_DENIED, CURLE_REMOTE_ACCESS_DENIED, CURLE_AUTH_ERROR:
            return NSURLErrorUserAuthenticationRequired
        case CURLE_FILE_COULDNT_READ_FILE, CURLE_REMOTE_FILE_NOT_FOUND:
            return NSURLErrorFileDoesNotExist
        case CURLE_OUT_OF_MEMORY, CURLE_FAILED_INIT, CURLE_BAD_FUNCTION_ARGUMENT, CURLE_UNKNOWN_OPTION,
             CURLE_RECURSIVE_API_CALL, CURLE_INTERFACE_FAILED:
            return NSURLErrorCannotLoadFromNetwork
        default:
            return NSURLErrorUnknown
        }
    }

    /// OpenSSL's X509_V_ERR_* value (CURLINFO_SSL_VERIFYRESULT) refines an
    /// untrusted certificate into Apple's finer codes.
    package static func certificateErrorCode(forVerifyResult result: Int) -> Int {
        switch result {
        case 9, 10:          // X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CERT_HAS_EXPIRED
            return NSURLErrorServerCertificateHasBadDate
        case 2, 18, 19, 20:  // unable to get issuer, self-signed leaf, self-signed in chain, no local issuer
            return NSURLErrorServerCertificateHasUnknownRoot
        case 13, 14, 15, 16: // malformed validity fields
            return NSURLErrorServerCertificateHasBadDate
        default:
            return NSURLErrorServerCertificateUntrusted
        }
    }

    package static func make(_ code: Int, url: URL?, underlying: NSError?, description: String? = nil) -> NSError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description ?? localizedDescription(for: code)]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
        }
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        return NSError(domain: NSURLErrorDomain, code: code, userInfo: info)
    }

    /// Apple's wording for each code, so messages read the same as on Darwin.
    package static func localizedDescription(for code: Int) -> String {
        switch code {
        case NSURLErrorCancelled: return "cancelled"
        case NSURLErrorBadURL: return "unsupported URL"
        case NSURLErrorUnsupportedURL: return "unsupported URL"
        case NSURLErrorTimedOut: return "The request timed out."
        case NSURLErrorCannotFindHost: return "A server with the specified hostname could not be found."
        case NSURLErrorCannotConnectToHost: return "Could not connect to the server."
        case NSURLErrorNetworkConnectionLost: return "The network connection was lost."
        case NSURLErrorHTTPTooManyRedirects: return "too many HTTP redirects"
        case NSURLErrorBadServerResponse: return "The server returned a bad response."
        case NSURLErrorCannotDecodeContentData: return "The server's response could not be decoded."
        case NSURLErrorDataLengthExceedsMaximum: return "The resource exceeds the maximum size."
        case NSURLErrorRequestBodyStreamExhausted: return "The request body stream failed or could not be re-sent."
        case NSURLErrorSecureConnectionFailed: return "An SSL error has occurred and a secure connection to the server cannot be made."
        case NSURLErrorServerCertificateHasBadDate: return "The certificate for this server is expired or not yet valid."
        case NSURLErrorServerCertificateUntrusted: return "The certificate for this server is invalid."
        case NSURLErrorServerCertificateHasUnknownRoot: return "The certificate for this server was signed by an unknown certifying authority."
        case NSURLErrorClientCertificateRejected: return "The server did not accept the certificate."
        case NSURLErrorClientCertificateRequired: return "The server requires a client certificate."
        case NSURLErrorUserAuthenticationRequired: return "The server requires authentication."
        case NSURLErrorFileDoesNotExist: return "The requested resource does not exist."
        case NSURLErrorCannotLoadFromNetwork: return "The request could not be started."
        default: return "An unknown error occurred."
        }
    }
}

extension TransportErrors {
    /// The error a request fails with when its transfer could not even be
    /// built: the request's own problem (already an `NSURLErrorDomain` error),
    /// or libcurl refusing an option.
    package static func error(forUnbuildableTransfer error: any Error, url: URL?) -> NSError {
        if let refused = error as? CurlOptionError {
            return make(urlErrorCode(for: refused.code), url: url, underlying: nil, description: "\(refused)")
        }
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain { return nsError }
        return make(NSURLErrorCannotLoadFromNetwork, url: url, underlying: nsError, description: "\(error)")
    }
}
