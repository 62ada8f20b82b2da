import CAFOpenSSL
import Foundation

/// An owned, parsed X.509 certificate (an OpenSSL `X509*`).
///
/// Parsing is the single gate for untrusted bytes: anything that is not exactly
/// one well-formed DER certificate of sane size never becomes a `Certificate`.
// @unchecked: `handle` is a `let` never mutated after parsing; OpenSSL's X509 is safe to read from several threads (it locks its own caches).
final class Certificate: @unchecked Sendable {
    /// Larger inputs are refused before OpenSSL sees them; real certificates are a
    /// few kilobytes, so this only bounds the work a hostile peer can cause.
    static let maximumDERSize = 256 * 1024

    /// The owned `X509*`.
    let handle: OpaquePointer

    /// Takes ownership of an `X509*` reference.
    init(owning handle: OpaquePointer) {
        self.handle = handle
    }

    /// Parses one DER certificate; `nil` for empty, oversized, garbage, truncated
    /// or trailing-garbage input.
    convenience init?(der: Data) {
        guard !der.isEmpty, der.count <= Certificate.maximumDERSize else { return nil }
        cafssl_init()
        let parsed: OpaquePointer? = der.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            return cafssl_cert_from_der(base, raw.count)
        }
        guard let parsed else { return nil }
        self.init(owning: parsed)
    }

    deinit {
        cafssl_cert_free(handle)
    }

    /// The certificate's DER encoding as OpenSSL re-serialises it, so that
    /// equal certificates compare equal byte for byte.
    var derData: Data? {
        Certificate.encode { buffer, capacity in cafssl_cert_to_der(handle, buffer, capacity) }
    }

    /// The DER SubjectPublicKeyInfo: the form in which public keys are compared and hashed.
    var subjectPublicKeyInfo: Data? {
        Certificate.encode { buffer, capacity in cafssl_cert_spki_to_der(handle, buffer, capacity) }
    }

    /// Runs a two-call "length, then copy" C encoder.
    private static func encode(_ encoder: (UnsafeMutablePointer<UInt8>?, Int) -> Int) -> Data? {
        let length = encoder(nil, 0)
        guard length > 0 else { return nil }
        var data = Data(count: length)
        let written = data.withUnsafeMutableBytes { raw in
            encoder(raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
        }
        return written == length ? data : nil
    }
}
