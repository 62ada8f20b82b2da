import CAFSystem
import Foundation

/// Tells when links, addresses or routes change, from a NETLINK_ROUTE socket
/// read by a dispatch source. The descriptor is closed only in the source's
/// cancel handler, after the source has stopped using it.
// @unchecked: `source` is a `let`, and a dispatch source may be cancelled from any thread.
final class RouteChangeMonitor: @unchecked Sendable {
    private let source: DispatchSourceRead

    /// nil when the kernel refuses a netlink socket (no monitoring possible).
    /// `onChange` runs on `queue`, so it must be `@Sendable`.
    init?(queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        let fd = cafsys_open_route_change_socket()
        guard fd >= 0 else { return nil }
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            // Drain every pending message; their content does not matter, the
            // status is evaluated afresh.
            var buffer = [UInt8](repeating: 0, count: 8192)
            while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
            onChange()
        }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    func stop() {
        source.cancel()
    }
}
