import Foundation

/// Decides reachability from the kernel's routing decision, without sending
/// anything: `connect()` on a UDP socket only selects a route and a source
/// address. The interface owning that source address tells WWAN from the rest.
enum RouteProbe {
    enum Target: Sendable {
        /// The network in general: a default route exists.
        case anyNetwork
        case domain(String)
        case address(Data)   // a sockaddr_in or sockaddr_in6
    }

    static func status(of target: Target) -> NetworkReachabilityStatus {
        switch target {
        case .anyNetwork:
            guard let interface = defaultRouteInterface() else { return .notReachable }
            return classify(interface: interface)
        case .address(let address):
            return status(ofSocketAddress: address)
        case .domain(let name):
            // Resolution failing means the name cannot be reached now.
            for address in resolve(name) {
                let status = status(ofSocketAddress: address)
                if status != .notReachable { return status }
            }
            return .notReachable
        }
    }

    /// Interface names that Linux gives cellular / wireless-WAN links.
    static func isWWAN(_ interface: String) -> Bool {
        ["wwan", "wwp", "ppp", "rmnet", "ccmni", "pdp", "usb", "qmi", "mbim"].contains { interface.hasPrefix($0) }
    }

    static func classify(interface: String) -> NetworkReachabilityStatus {
        isWWAN(interface) ? .reachableViaWWAN : .reachableViaWiFi
    }

    private static func status(ofSocketAddress address: Data) -> NetworkReachabilityStatus {
        guard address.count >= MemoryLayout<sa_family_t>.size else { return .notReachable }
        let family = address.withUnsafeBytes { $0.load(as: sa_family_t.self) }
        guard family == sa_family_t(AF_INET) || family == sa_family_t(AF_INET6) else { return .notReachable }
        let fd = socket(Int32(family), Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return .notReachable }
        defer { close(fd) }
        let connected = address.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress?.assumingMemoryBound(to: sockaddr.self) else { return false }
            return connect(fd, base, socklen_t(buffer.count)) == 0
        }
        guard connected else { return .notReachable }
        var local = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard named, let interface = interfaceOwning(local) else { return .reachableViaWiFi }
        return classify(interface: interface)
    }

    /// The interface carrying the IPv4 or IPv6 default route, from /proc.
    static func defaultRouteInterface() -> String? {
        if let table = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8) {
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                // Iface Destination Gateway Flags …; destination 0 is the default route, flag 1 is "up".
                if fields.count > 3, fields[1] == "00000000", let flags = Int(fields[3], radix: 16), flags & 1 == 1 {
                    return String(fields[0])
                }
            }
        }
        if let table = try? String(contentsOfFile: "/proc/net/ipv6_route", encoding: .utf8) {
            for line in table.split(separator: "\n") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                // destination ::/0, not the unreachable route of "lo".
                if fields.count >= 10, fields[0] == String(repeating: "0", count: 32), fields[1] == "00", fields[9] != "lo" {
                    return String(fields[9])
                }
            }
        }
        return nil
    }

    private static func interfaceOwning(_ address: sockaddr_storage) -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var local = address
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let candidate = entry.pointee.ifa_addr, candidate.pointee.sa_family == local.ss_family else { continue }
            let same: Bool = withUnsafePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sameHost($0, candidate) }
            }
            if same { return String(cString: entry.pointee.ifa_name) }
        }
        return nil
    }

    private static func sameHost(_ lhs: UnsafePointer<sockaddr>, _ rhs: UnsafePointer<sockaddr>) -> Bool {
        if lhs.pointee.sa_family == sa_family_t(AF_INET) {
            let a = UnsafeRawPointer(lhs).assumingMemoryBound(to: sockaddr_in.self).pointee.sin_addr.s_addr
            let b = UnsafeRawPointer(rhs).assumingMemoryBound(to: sockaddr_in.self).pointee.sin_addr.s_addr
            return a == b
        }
        var a = UnsafeRawPointer(lhs).assumingMemoryBound(to: sockaddr_in6.self).pointee.sin6_addr
        var b = UnsafeRawPointer(rhs).assumingMemoryBound(to: sockaddr_in6.self).pointee.sin6_addr
        return memcmp(&a, &b, MemoryLayout<in6_addr>.size) == 0
    }

    private static func resolve(_ name: String) -> [Data] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &results) == 0, let first = results else { return [] }
        defer { freeaddrinfo(results) }
        var addresses: [Data] = []
        for entry in sequence(first: first, next: { $0.pointee.ai_next }) {
            guard let address = entry.pointee.ai_addr else { continue }
            var copy = Data(bytes: address, count: Int(entry.pointee.ai_addrlen))
            // A port is needed for connect(); any will do, nothing is sent.
            copy.withUnsafeMutableBytes { buffer in
                if address.pointee.sa_family == sa_family_t(AF_INET) {
                    buffer.baseAddress?.assumingMemoryBound(to: sockaddr_in.self).pointee.sin_port = in_port_t(UInt16(9).bigEndian)
                } else if address.pointee.sa_family == sa_family_t(AF_INET6) {
                    buffer.baseAddress?.assumingMemoryBound(to: sockaddr_in6.self).pointee.sin6_port = in_port_t(UInt16(9).bigEndian)
                }
            }
            addresses.append(copy)
        }
        return addresses
    }
}
