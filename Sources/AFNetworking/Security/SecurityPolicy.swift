@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Evaluates a server's certificate chain against the trust store, the host
/// name and, optionally, pinned certificates or public keys
/// (AFNetworking 2.7's `AFSecurityPolicy`).
///
/// The decision order and its quirks are 2.7's; see
/// `evaluate(_:forDomain:)`. Certificates are DER `Data`; OpenSSL does the
/// chain building and checking. A manager shares one policy with every
/// operation it runs, so its settings may change while handshakes on other
/// threads evaluate it; each evaluation sees one consistent set of settings.
// @unchecked: every mutable stored property lives in `state` (LockedState); `sslPinningMode` is a `let`.
open class SecurityPolicy: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// The settings and the pins derived from them, behind one lock, so an
    /// evaluation never sees pins that do not match the settings.
    struct State {
        var pinnedCertificates: [Data]?
        var pinnedPublicKeyHashes: Set<String> = []
        var allowInvalidCertificates = false
        var validatesDomainName = true
        var additionalTrustedCertificates: [Data] = []
        /// The system store plus `additionalTrustedCertificates`, built on first use.
        var extendedStore: TrustStore?
        /// Parsed forms of the pins, rebuilt whenever either pin property changes.
        var pins = PinSnapshot()

        /// Rebuilds `pins` from the two pin properties.
        mutating func rebuildPins() {
            pins = PinSnapshot(certificates: pinnedCertificates, hashes: pinnedPublicKeyHashes)
        }
    }

    let state = LockedState(State())

    /// A copy of every setting, taken in one locked step.
    var settings: State { state.withLock { $0 } }

    /// How the chain is pinned. Defaults to `.none`.
    public let sslPinningMode: SSLPinningMode

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
    public override convenience init() {
        self.init(mode: .none)
    }

    /// The designated initializer that does not touch the bundle.
    init(mode: SSLPinningMode) {
        sslPinningMode = mode
        super.init()
    }

    /// 2.7's NSOrderedSet behaviour: drop repeated certificates, keep the order.
    private static func removingDuplicates(_ certificates: [Data]) -> [Data] {
        var seen = Set<Data>()
        return certificates.filter { seen.insert($0).inserted }
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
