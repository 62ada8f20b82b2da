import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// An in-process HTTP/1.1 server on 127.0.0.1 that streams large bodies
/// honestly: each piece is written only after the socket took the previous
/// one, so `bodyBytesWritten` is what the kernel accepted — a client that
/// stops reading stops it (its send buffer is kept small). It also counts
/// closed connections, so a test can see a client abort a transfer.
///
/// Paths:
/// - `/bytes/N`: 200, N bytes of `StreamingBodyServer.byte(at:)`.
/// - `/short/N/K`: 200 announcing `Content-Length: N`, K bytes, then the connection is closed.
/// - `/status/S/N`: status S with an N-byte body.
final class StreamingBodyServer: @unchecked Sendable {
    // @unchecked: the counters are behind `lock`; the rest is set once in init.

    static let pieceSize = 64 * 1024

    /// The body's byte at `offset` (a pattern whose period is no power of two,
    /// so a lost or repeated piece shows).
    static func byte(at offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset % 251) }

    /// The pattern from any offset for one piece: `pattern[offset % 251...]`.
    static let pattern = Data((0..<(pieceSize + 251)).map { byte(at: $0) })

    /// The first `count` bytes of every body.
    static func body(count: Int) -> Data {
        var body = Data(capacity: count)
        while body.count < count {
            let start = body.count % 251
            body.append(pattern[start..<(start + min(pieceSize, count - body.count))])
        }
        return body
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private let lock = NSLock()
    private var written = 0
    private var closed = 0
    private(set) var port = 0
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    init() throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            // Small: the kernel's share of a stalled body stays small too.
            .childChannelOption(ChannelOptions.socketOption(.so_sndbuf), value: 64 * 1024)
            .childChannelInitializer { [weak self] channel in
                guard let self else { return channel.eventLoop.makeSucceededVoidFuture() }
                return channel.pipeline.configureHTTPServerPipeline(withErrorHandling: false).flatMap {
                    channel.pipeline.addHandler(StreamingHandler(server: self))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel?.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel?.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Body bytes the socket accepted, over all connections.
    var bodyBytesWritten: Int { lock.lock(); defer { lock.unlock() }; return written }
    /// Connections that were closed (by either side).
    var closedConnections: Int { lock.lock(); defer { lock.unlock() }; return closed }

    fileprivate func noteWritten(_ count: Int) { lock.lock(); written += count; lock.unlock() }
    fileprivate func noteClosed() { lock.lock(); closed += 1; lock.unlock() }
}

private final class StreamingHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: used only on its channel's event loop.
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: StreamingBodyServer
    private var uri = ""

    init(server: StreamingBodyServer) { self.server = server }

    func channelInactive(context: ChannelHandlerContext) {
        server.noteClosed()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): uri = head.uri
        case .body: break
        case .end: answer(context: context)
        }
    }

    private func answer(context: ChannelHandlerContext) {
        let parts = uri.split(separator: "/").map(String.init)
        let numbers = parts.dropFirst().compactMap { Int($0) }
        var status = 200, announced = 0, sent = 0
        switch (parts.first, numbers.count) {
        case ("bytes", 1): (announced, sent) = (numbers[0], numbers[0])
        case ("short", 2): (announced, sent) = (numbers[0], numbers[1])
        case ("status", 2): (status, announced, sent) = (numbers[0], numbers[1], numbers[1])
        default: (status, announced, sent) = (400, 0, 0)
        }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status),
                                    headers: ["Content-Length": "\(announced)", "Content-Type": "application/octet-stream"])
        context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
        writeBody(from: 0, to: sent, closingEarly: sent < announced, context: context)
    }

    /// One piece at a time: the next is written once the socket took this one.
    private func writeBody(from offset: Int, to end: Int, closingEarly: Bool, context: ChannelHandlerContext) {
        guard offset < end else {
            if closingEarly {
                context.close(promise: nil)
            } else {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
            return
        }
        let count = min(StreamingBodyServer.pieceSize, end - offset)
        let start = offset % 251
        let buffer = context.channel.allocator.buffer(bytes: StreamingBodyServer.pattern[start..<(start + count)])
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).whenComplete { result in
            guard case .success = result else { return }
            self.server.noteWritten(count)
            self.writeBody(from: offset + count, to: end, closingEarly: closingEarly, context: bound.value)
        }
    }
}
