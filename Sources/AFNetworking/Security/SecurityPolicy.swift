@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import Synchronization

/// Evaluates a server's certificate chain against the trust store, the host
/// name and, optionally, pinned certificates or public keys
/// (AFNetworking 2.7's `AFSecurityPolicy`).
///
/// The decision order and its quirks are 2.7's; see
/// `evaluate(_:forDomain:)`. Certificates are DER `Data`; OpenSSL does the
/// chain building and checking. A manager shares one policy with every
/// operation it runs, so its settings may change while handshakes on other
/// threads evaluate it; each evaluation sees one consistent set of settings.
// @unchecked: every mutable stored property lives in `state` (LockedState), except
// `sslPinningMode`, which only the initializers write.
open class SecurityPolicy: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// The settings and the pins derived from them, behind one lock, so an
    /// evaluation never sees pins that do not match the settings.
    struct State {
        var pinnedCertificates: [Data]? { didSet { settingsChanged() } }
        var pinnedPublicKeyHashes: Set<String> = [] { didSet { settingsChanged() } }
        var allowInvalidCertificates = false { didSet { settingsChanged() } }
        var validatesDomainName = true { didSet { settingsChanged() } }
        var additionalTrustedCertificates: [Data] = [] { didSet { settingsChanged() } }
        /// The system store plus `additionalTrustedCertificates`, built on first use.
        var extendedStore: TrustStore?
        /// Parsed forms of the pins, rebuilt whenever either pin property changes.
        var pins = PinSnapshot()
        /// `handshakeFingerprint` of these settings, once worked out (every
        /// request's snapshot needs it; it hashes each certificate).
        var fingerprint: String?
        /// Counts changes of the settings: a fingerprint worked out from an
        /// older snapshot is not kept.
        var generation: UInt64 = 0

        /// Rebuilds `pins` from the two pin properties.
        mutating func rebuildPins() {
            pins = PinSnapshot(certificates: pinnedCertificates, hashes: pinnedPublicKeyHashes)
        }

        private mutating func settingsChanged() {
            fingerprint = nil
            generation &+= 1
        }
    }

    let state = LockedState(State())

    /// Tells this object apart from every other policy made in the process
    /// (an address can be reused once a policy is freed): a subclass's
    /// connections and cached answers are kept to the policy object they
    /// were verified under (`partitionKey`).
    let instanceSerial = SecurityPolicy.serials.wrappingAdd(1, ordering: .relaxed).newValue
    /// An atomic, not a lock: every policy made takes one, the per-request
    /// snapshots of a non-standard policy included.
    private static let serials = Atomic<UInt64>(0)

    /// A copy of every setting, taken in one locked step.
    var settings: State { state.withLock { $0 } }

    /// How the chain is pinned. Defaults to `.none`. (A `private(set) var`, not
    /// a `let`, only so that `init(mode:)` can be a convenience initializer.)
    public private(set) var sslPinningMode: SSLPinningMode

    /// The DER certificates used for pinning. Duplicates are removed, first
    /// occurrence kept. `init(pinningMode:)` fills it from the main bundle
    /// (see `DefaultPinnedCertificates`); `default()` leaves it `nil`.
    public var pinnedCertificates: [Data]? {
        get { state[\.pinnedCertificates] }
        set {
            let unique = newValue.map(SecurityPolicy.removingDuplicates)
            state.withLock {
                $0.pinnedCertificates = unique
                $0.rebuildPins()
            }
        }
    }

    /// Extra public-key pins for `.publicKey` mode, beyond 2.7: SPKI SHA-256
    /// hashes written `sha256/BASE64` (as OkHttp does). Listing backup pins
    /// (keys not deployed yet) lets a key be rotated without an app update; one
    /// match anywhere in the built chain is enough. Malformed entries never match.
    public var pinnedPublicKeyHashes: Set<String> {
        get { state[\.pinnedPublicKeyHashes] }
        set {
            state.withLock {
                $0.pinnedPublicKeyHashes = newValue
                $0.rebuildPins()
            }
        }
    }

    /// Whether to accept a chain the trust store does not trust, or one that
    /// is expired. Defaults to `false`.
    public var allowInvalidCertificates: Bool {
        get { state[\.allowInvalidCertificates] } set { state.set(\.allowInvalidCertificates, to: newValue) }
    }

    /// Whether to check the leaf against the domain passed to
    /// `evaluateServerTrust(_:forDomain:)`. Defaults to `true`.
    public var validatesDomainName: Bool {
        get { state[\.validatesDomainName] } set { state.set(\.validatesDomainName, to: newValue) }
    }

    /// CA certificates (DER) trusted in addition to the system store, beyond
    /// 2.7: how a client trusts a private CA without `SSL_CERT_FILE` for the
    /// whole process, and without 2.7's `allowInvalidCertificates` plus
    /// pinning. The chain, the host name and the dates are still checked.
    public var additionalTrustedCertificates: [Data] {
        get { state[\.additionalTrustedCertificates] }
        set {
            let unique = SecurityPolicy.removingDuplicates(newValue)
            state.withLock {
                $0.additionalTrustedCertificates = unique
                $0.extendedStore = nil
            }
        }
    }

    /// The policy AFNetworking uses unless told otherwise: no pinning, invalid
    /// certificates refused, domain names validated, no pinned certificates.
    public static func `default`() -> SecurityPolicy {
        SecurityPolicy(mode: .none)
    }

    /// A policy with `pinningMode` whose `pinnedCertificates` are the `.cer`
    /// files directly inside `Bundle.main.resourceURL` — on Linux, for a plain
    /// executable, the directory that contains the executable — possibly none,
    /// never `nil`.
    public init(pinningMode: SSLPinningMode) {
        sslPinningMode = pinningMode
        super.init()
        pinnedCertificates = DefaultPinnedCertificates.load()
    }

    /// A policy with `pinningMode` pinning `withPinnedCertificates` (DER).
    public convenience init(pinningMode: SSLPinningMode, withPinnedCertificates pinnedCertificates: [Data]) {
        self.init(mode: pinningMode)
        self.pinnedCertificates = pinnedCertificates
    }

    /// Same as `default()`: 2.7's plain `init` (no pinning, no pinned certificates).
    ///
    /// This and `init(pinningMode:)` are the designated initializers, both
    /// public: a subclass in another module that declares no initializer then
    /// inherits every one, `init?(coder:)` (required) included. An internal
    /// designated initializer would stop that inheritance, and such a subclass
    /// would not compile.
    public override init() {
        sslPinningMode = .none
        super.init()
    }

    /// A policy with `mode` that does not touch the bundle.
    convenience init(mode: SSLPinningMode) {
        self.init()
        sslPinningMode = mode
    }

    /// 2.7's NSOrderedSet behaviour: drop repeated certificates, keep the order.
    private static func removingDuplicates(_ certificates: [Data]) -> [Data] {
        var seen = Set<Data>()
        return certificates.filter { seen.insert($0).inserted }
    }

    // MARK: Evaluation

    // Declared here, in the class body, so that a subclass can override them
    // (Swift cannot override a member declared in an extension); the work is
    // in SecurityPolicy+Evaluation.swift.

    /// Whether `trust` should be accepted for `domain` (2.7's
    /// `evaluateServerTrust:forDomain:`). `nil` domain: the host is not checked.
    open func evaluateServerTrust(_ trust: ServerTrust, forDomain domain: String?) -> Bool {
        if case .success = evaluate(trust, forDomain: domain) { return true }
        return false
    }

    /// Whether `trust` should be accepted, without checking any host name.
    @available(*, deprecated, renamed: "evaluateServerTrust(_:forDomain:)")
    open func evaluateServerTrust(_ trust: ServerTrust) -> Bool {
        evaluateServerTrust(trust, forDomain: nil)
    }

    /// Evaluates `trust` for `domain` and says why it was refused.
    ///
    /// The order is AFNetworking 2.7's:
    /// 1. A chain that is empty, too long or holds a certificate that is not
    ///    well-formed DER is refused (`.malformedCertificate`); 2.7 could not
    ///    even build a `SecTrustRef` from one.
    /// 2. With a domain, `allowInvalidCertificates` and `validatesDomainName`,
    ///    pinning is required: mode `.none` or no pins is refused
    ///    (`.domainValidationRequiresPinning`).
    /// 3. The chain is verified against the trust anchors (the system store
    ///    or `trust.anchorCertificates`) for TLS server use and the domain when
    ///    `validatesDomainName`, as a plain X.509 chain otherwise.
    /// 4. Mode `.none`: accepted if `allowInvalidCertificates` or step 3 passed.
    /// 5. Otherwise a failed step 3 refuses unless `allowInvalidCertificates`.
    ///    When the pins alone would have accepted the chain, the refusal's
    ///    detail says so and names the two settings that would accept it.
    /// 6. `.certificate`: the chain is verified again with the pinned
    ///    certificates as the only anchors (host and dates still checked), and
    ///    a certificate of the chain built that way must be pinned.
    /// 7. `.publicKey`: a public key of the chain built in step 3 must be the
    ///    key of a pinned certificate or match `pinnedPublicKeyHashes`. Note
    ///    that, as in 2.7, with `allowInvalidCertificates` this mode checks
    ///    neither the host nor the dates.
    open func evaluate(_ trust: ServerTrust, forDomain domain: String?) -> Result<Void, SecurityPolicyError> {
        evaluateChain(trust, forDomain: domain)
    }

    // MARK: NSSecureCoding

    /// `true`: a policy decodes with `decodeObject(of:forKey:)`.
    public static var supportsSecureCoding: Bool { true }

    /// Decodes what `encode(with:)` wrote, under 2.7's keys.
    public required convenience init?(coder: NSCoder) {
        let rawMode = (coder.decodeObject(of: NSNumber.self, forKey: CodingKey.pinningMode))?.uintValue ?? 0
        self.init(mode: SSLPinningMode(rawValue: rawMode) ?? .none)
        allowInvalidCertificates = coder.decodeBool(forKey: CodingKey.allowInvalidCertificates)
        validatesDomainName = coder.decodeBool(forKey: CodingKey.validatesDomainName)
        // A key that was never written must not be decoded: swift-corelibs-
        // foundation then fails the whole archive ("the data is missing").
        if coder.containsValue(forKey: CodingKey.pinnedCertificates) {
            let certificates = coder.decodeObject(of: [NSArray.self, NSData.self], forKey: CodingKey.pinnedCertificates)
            pinnedCertificates = (certificates as? [NSData])?.map { Data(referencing: $0) }
                ?? (certificates as? [Data])
        }
        let hashes = coder.decodeObject(of: [NSArray.self, NSString.self], forKey: CodingKey.pinnedPublicKeyHashes)
        pinnedPublicKeyHashes = Set((hashes as? [String]) ?? [])
        if coder.containsValue(forKey: CodingKey.additionalTrustedCertificates) {
            let certificates = coder.decodeObject(of: [NSArray.self, NSData.self], forKey: CodingKey.additionalTrustedCertificates)
            additionalTrustedCertificates = (certificates as? [NSData])?.map { Data(referencing: $0) } ?? (certificates as? [Data]) ?? []
        }
    }

    /// Encodes the mode, both flags, the pinned certificates and the hash pins.
    open func encode(with coder: NSCoder) {
        let settings = self.settings
        coder.encode(NSNumber(value: sslPinningMode.rawValue), forKey: CodingKey.pinningMode)
        coder.encode(settings.allowInvalidCertificates, forKey: CodingKey.allowInvalidCertificates)
        coder.encode(settings.validatesDomainName, forKey: CodingKey.validatesDomainName)
        if let pinnedCertificates = settings.pinnedCertificates {
            coder.encode(pinnedCertificates.map { NSData(data: $0) } as NSArray, forKey: CodingKey.pinnedCertificates)
        }
        coder.encode(settings.pinnedPublicKeyHashes.sorted().map { NSString(string: $0) } as NSArray,
                     forKey: CodingKey.pinnedPublicKeyHashes)
        if !settings.additionalTrustedCertificates.isEmpty {
            coder.encode(settings.additionalTrustedCertificates.map { NSData(data: $0) } as NSArray,
                         forKey: CodingKey.additionalTrustedCertificates)
        }
    }

    /// Archive keys; the first four are 2.7's.
    private enum CodingKey {
        static let pinningMode = "SSLPinningMode"
        static let allowInvalidCertificates = "allowInvalidCertificates"
        static let validatesDomainName = "validatesDomainName"
        static let pinnedCertificates = "pinnedCertificates"
        static let pinnedPublicKeyHashes = "pinnedPublicKeyHashes"
        static let additionalTrustedCertificates = "additionalTrustedCertificates"
    }

    // MARK: NSCopying

    /// An independent `SecurityPolicy` with the same settings. Subclasses that
    /// add state override this and copy it too.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = SecurityPolicy(mode: sslPinningMode)
        // One snapshot, pins included (they are immutable once built), written
        // under the copy's own lock: never both locks at once.
        let settings = self.settings
        copy.state.withLock { $0 = settings }
        return copy
    }
}
