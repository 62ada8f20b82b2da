import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// An in-process HTTP/1.1 server on 127.0.0.1 for scripted cases: each route
/// answers with a list of steps (head, body, pause, close), so tests can play
/// slow bodies, stalls, dropped connections and odd replies over a real socket.
final class ScriptedServer: @unchecked Sendable {
    struct Request {
        let method: String
        let uri: String
        let headers: HTTPHeaders
        let body: Data
    }

    enum Step {
        case head(status: Int, headers: [(String, String)])
        /// A head whose status line carries this reason phrase instead of the usual one.
        case headWithReason(status: Int, reason: String, headers: [(String, String)])
        case body(Data)
        case wait(TimeInterval)
        /// Waits until `condition` holds (checked every 10 ms), at most `timeout`
        /// seconds: the client has seen what came before.
        case waitUntil(@Sendable () -> Bool, timeout: TimeInterval)
        /// Runs `action` on the server's event loop when the answer gets here
        /// (a route's bookkeeping: say, counting an answer as given just
        /// before its end goes out, before the client can have it).
        case perform(@Sendable () -> Void)
        case end
        /// Ends a chunked body (a head without Content-Length) with these trailer fields.
        case endWithTrailers([(String, String)])
        /// Closes the connection without finishing the response.
        case close
    }

    /// Runs on the server's event loop, so it must be `@Sendable`.
    typealias Route = @Sendable (Request) -> [Step]

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private let lock = NSLock()
    private var routes: [String: Route] = [:]
    private var _requests: [Request] = []
    private var _connections = 0
    private var _headsSent = 0

    private(set) var port = 0
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Listens on `port`, or on a free one for 0 (a test that first needs the
    /// port refused brings the server up on it later). `validatesHeaders:
    /// false` lets a route send field values NIO would refuse (control
    /// characters), for tests of hostile responses.
    init(port: Int = 0, validatesHeaders: Bool = true) throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [weak self] channel in
                guard let self else { return channel.eventLoop.makeSucceededVoidFuture() }
                self.lock.lock(); self._connections += 1; self.lock.unlock()
                return channel.pipeline.configureHTTPServerPipeline(withErrorHandling: false,
                                                                    withOutboundHeaderValidation: validatesHeaders).flatMap {
                    channel.pipeline.addHandler(RouteHandler(server: self))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: port).wait()
        self.port = channel?.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel?.close().wait()
        try? group.syncShutdownGracefully()
    }

    func route(_ path: String, _ route: @escaping Route) {
        lock.lock(); routes[path] = route; lock.unlock()
    }

    /// Answers `path` with one complete response.
    func respond(_ path: String, status: Int = 200, headers: [(String, String)] = [], body: Data = Data()) {
        route(path) { _ in
            [.head(status: status, headers: headers + [("Content-Length", "\(body.count)")]), .body(body), .end]
        }
    }

    var requests: [Request] { lock.lock(); defer { lock.unlock() }; return _requests }
    var connectionCount: Int { lock.lock(); defer { lock.unlock() }; return _connections }
    /// Response heads written so far: a route that waits before its head has not
    /// answered yet while this stays at 0 (evidence that a client did not wait for it).
    var headsSent: Int { lock.lock(); defer { lock.unlock() }; return _headsSent }

    fileprivate func noteHeadSent() {
        lock.lock(); _headsSent += 1; lock.unlock()
    }

    fileprivate func steps(for request: Request) -> [Step] {
        lock.lock()
        _requests.append(request)
        let path = String(request.uri.split(separator: "?", maxSplits: 1).first ?? "")
        let route = routes[path] ?? routes[request.uri]
        lock.unlock()
        if let route { return route(request) }
        return [.head(status: 404, headers: [("Content-Length", "0")]), .end]
    }
}

private final class RouteHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ScriptedServer
    private var head: HTTPRequestHead?
    private var body = Data()

    init(server: ScriptedServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body = Data()
        case .body(var buffer):
            if let bytes = buffer.readBytes(length: buffer.readableBytes) { body.append(contentsOf: bytes) }
        case .end:
            guard let head else { return }
            let request = ScriptedServer.Request(method: head.method.rawValue, uri: head.uri, headers: head.headers, body: body)
            let steps = server.steps(for: request)
            play(steps[...], context: context, keepAlive: head.isKeepAlive)
        }
    }

    fileprivate func play(_ steps: ArraySlice<ScriptedServer.Step>, context: ChannelHandlerContext, keepAlive: Bool) {
        guard let step = steps.first else { return }
        let rest = steps.dropFirst()
        switch step {
        case .head(let status, let headers), .headWithReason(let status, _, let headers):
            var fields = HTTPHeaders(headers)
            if !keepAlive { fields.replaceOrAdd(name: "Connection", value: "close") }
            var code = HTTPResponseStatus(statusCode: status)
            if case .headWithReason(_, let reason, _) = step { code = .custom(code: UInt(status), reasonPhrase: reason) }
            let head = HTTPResponseHead(version: .http1_1, status: code, headers: fields)
            server.noteHeadSent()
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.flush()
            play(rest, context: context, keepAlive: keepAlive)
        case .body(let data):
            let buffer = context.channel.allocator.buffer(bytes: data)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).whenComplete { _ in
                self.play(rest, context: bound.value, keepAlive: keepAlive)
            }
        case .wait(let seconds):
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
                self.play(rest, context: bound.value, keepAlive: keepAlive)
            }
        case .waitUntil(let condition, let timeout):
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let deadline = NIODeadline.now() + .milliseconds(Int64(timeout * 1000))
            poll(condition, until: deadline, then: rest, context: bound, keepAlive: keepAlive)
        case .perform(let action):
            action()
            play(rest, context: context, keepAlive: keepAlive)
        case .end:
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { bound.value.close(promise: nil) }
                self.play(rest, context: bound.value, keepAlive: keepAlive)
            }
        case .endWithTrailers(let fields):
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(HTTPHeaders(fields)))).whenComplete { _ in
                if !keepAlive { bound.value.close(promise: nil) }
                self.play(rest, context: bound.value, keepAlive: keepAlive)
            }
        case .close:
            context.close(promise: nil)
        }
    }
}

extension RouteHandler {
    /// Plays `rest` once `condition` holds or `deadline` passes (a bounded poll on the event loop).
    fileprivate func poll(_ condition: @escaping @Sendable () -> Bool, until deadline: NIODeadline,
                          then rest: ArraySlice<ScriptedServer.Step>, context: NIOLoopBound<ChannelHandlerContext>, keepAlive: Bool) {
        if condition() || NIODeadline.now() >= deadline {
            play(rest, context: context.value, keepAlive: keepAlive)
            return
        }
        context.value.eventLoop.scheduleTask(in: .milliseconds(10)) {
            self.poll(condition, until: deadline, then: rest, context: context, keepAlive: keepAlive)
        }
    }
}

/// A TCP server that answers every connection with fixed bytes (no HTTP
/// framing at all), then closes it or, with `nil`, stays silent forever.
final class RawReplyServer: @unchecked Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private(set) var port = 0
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    init(reply: Data?) throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.addHandler(RawReplyHandler(reply: reply))
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel?.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel?.close().wait()
        try? group.syncShutdownGracefully()
    }
}

private final class RawReplyHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let reply: Data?
    private var answered = false

    init(reply: Data?) { self.reply = reply }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered, let reply else { return }
        answered = true
        let buffer = context.channel.allocator.buffer(bytes: reply)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in bound.value.close(promise: nil) }
    }
}
