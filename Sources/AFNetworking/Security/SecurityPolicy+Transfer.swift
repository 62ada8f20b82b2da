/// How a policy translates into the transport's certificate checks.
extension SecurityPolicy {
    var transferVerification: TLSVerification {
        var verification = TLSVerification()
        verification.verifiesPeer = !allowInvalidCertificates
        verification.verifiesHost = validatesDomainName
        return verification
    }
}
