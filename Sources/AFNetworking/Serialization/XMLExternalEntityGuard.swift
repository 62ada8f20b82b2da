import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The package's entity policy for XML from the network: external entities,
/// external parameter entities and external DTD subsets are never loaded (no
/// file is read, no URL fetched); internal entities are substituted, bounded by
/// libxml2's amplification limits.
///
/// FoundationXML builds `XMLDocument` with libxml2's entity substitution, and
/// libxml2 loads external entities through one process-wide loader. That loader
/// defers to the `XMLParser` being parsed on the current thread, whose default
/// policy is `.never`; with no parser current it reads whatever the document
/// names. `XMLNode.Options.nodeLoadExternalEntitiesNever` is no answer: on
/// Linux it also turns off internal substitution and leaves references behind as
/// nodes of kind `.invalid`. So the document is built while a parser with the
/// `.never` policy is current: from its start-of-document callback. (Called
/// from inside another `XMLParser`'s callback, the guard leaves no parser
/// current on return, as FoundationXML's own nested parses do.)
enum XMLExternalEntityGuard {
    /// Options that would ask libxml2 to fetch external DTDs; never honoured.
    static let loadingOptions: XMLNode.Options = [.nodeLoadExternalEntitiesAlways, .nodeLoadExternalEntitiesSameOriginOnly]

    /// Runs `body` with external entity loading refused on this thread. Throws
    /// rather than running `body` unguarded if the guard could not be set up.
    static func run<T>(_ body: () throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            let carrier = Carrier(body)
            let parser = XMLParser(data: Data("<g/>".utf8))
            parser.externalEntityResolvingPolicy = .never
            parser.allowedExternalEntityURLs = nil
            parser.delegate = carrier
            _ = parser.parse()
            parser.delegate = nil
            guard let result = carrier.result else {
                throw NSError(domain: XMLParser.errorDomain, code: XMLParser.ErrorCode.internalError.rawValue,
                              userInfo: [NSLocalizedDescriptionKey: "The XML parser could not be set up to refuse external entities"])
            }
            return try result.get()
        }
    }

    /// Runs the work once, from inside the guarding parse. Lives only for one
    /// synchronous `run` on one thread; no state is shared.
    private final class Carrier<T>: NSObject, XMLParserDelegate {
        private let work: () throws -> T
        private(set) var result: Result<T, Error>?

        init(_ work: @escaping () throws -> T) { self.work = work }

        func parserDidStartDocument(_ parser: XMLParser) {
            guard result == nil else { return }
            // Errors cannot cross libxml2's C frames: they are kept and rethrown after the parse.
            result = Result { try work() }
        }
    }
}
