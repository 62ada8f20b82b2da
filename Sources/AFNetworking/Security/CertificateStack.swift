import CAFOpenSSL

/// An owned OpenSSL `STACK_OF(X509)`, the shape X509_STORE_CTX wants for the
/// untrusted intermediates and returns for the built chain.
final class CertificateStack {
    /// The owned stack pointer.
    let handle: OpaquePointer

    /// Takes ownership of an existing stack.
    init(owning handle: OpaquePointer) {
        self.handle = handle
    }

    /// A new stack holding its own references to `certificates`; `nil` if OpenSSL
    /// cannot allocate.
    convenience init?(_ certificates: [Certificate]) {
        guard let stack = cafssl_stack_new() else { return nil }
        self.init(owning: stack)
        for certificate in certificates where cafssl_stack_push(stack, certificate.handle) != 1 {
            return nil
        }
    }

    deinit {
        cafssl_stack_free(handle)
    }

    /// The certificates, in stack order, each with its own reference.
    var certificates: [Certificate] {
        let count = Int(cafssl_stack_count(handle))
        return (0..<count).compactMap { index in
            cafssl_stack_get_owned(handle, Int32(index)).map(Certificate.init(owning:))
        }
    }
}
