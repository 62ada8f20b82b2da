import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

// AFNetworking 2.7 shipped an example client for the App.net API: a shared
// AFHTTPSessionManager subclass, a `Post` model with
// `+globalTimelinePostsWithBlock:`, and a `User` whose avatar was fetched by an
// AFHTTPRequestOperation on a queue of at most 8. This is that client as a
// porter writes it against this package (no imports beyond Foundation and
// AFNetworking, only public API), compiled and run against a local stand-in
// for the API. The block form is the 2.x code moved over; the `async` form and
// the Decodable form are what it becomes when the porter modernises it.

/// The API the example client talks to. The real client pointed at
/// https://api.app.net/; here a local server answers the same paths.
enum AppDotNetAPI {
    static let server: ScriptedServer = {
        // A failure to bind is a broken test machine, not a test outcome.
        let server = try! ScriptedServer()
        let timeline: [String: Any] = [
            "meta": ["code": 200],
            "data": [
                ["id": "1", "text": "first post", "user": ["id": "10", "username": "mattt",
                                                           "avatar_image": ["url": "\(server.baseURL)/avatars/10.png"]]],
                ["id": "2", "text": "second post", "user": ["id": "11", "username": "kcharwood",
                                                            "avatar_image": ["url": "\(server.baseURL)/avatars/11.png"]]],
            ],
        ]
        server.respond("/stream/0/posts/stream/global", headers: [("Content-Type", "application/json")],
                       body: try! JSONSerialization.data(withJSONObject: timeline))
        server.respond("/avatars/10.png", headers: [("Content-Type", "image/png")], body: ImageSamples.png(48, 48))
        server.respond("/avatars/11.png", headers: [("Content-Type", "image/png")], body: ImageSamples.png(96, 96))
        server.respond("/stream/0/posts/stream/broken", status: 503, headers: [("Content-Type", "text/plain")],
                       body: Data("maintenance".utf8))
        return server
    }()
}

/// `AFAppDotNetAPIClient`: one shared session manager for the API.
final class AppDotNetAPIClient: HTTPSessionManager, @unchecked Sendable {
    // @unchecked: adds no state to HTTPSessionManager, whose own state is locked.

    /// `+sharedClient`.
    static let shared: AppDotNetAPIClient = {
        let client = AppDotNetAPIClient(baseURL: AppDotNetAPI.server.baseURL)
        client.securityPolicy = SecurityPolicy(pinningMode: .none)
        return client
    }()
}

/// `User`, with its avatar fetched as 2.7's OS X target did.
struct User: Sendable {
    let userID: Int
    let username: String
    let avatarImageURL: URL?

    init(attributes: [String: Any]) {
        userID = Int(attributes["id"] as? String ?? "") ?? 0
        username = attributes["username"] as? String ?? ""
        avatarImageURL = ((attributes["avatar_image"] as? [String: Any])?["url"] as? String).flatMap(URL.init(string:))
    }

    /// `+sharedProfileImageRequestOperationQueue`.
    static let profileImageQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 8
        return queue
    }()

    /// The avatar through an `HTTPRequestOperation` with the image serializer.
    func loadProfileImage(_ completion: @escaping @Sendable (Image?, Error?) -> Void) {
        guard let url = avatarImageURL else { return completion(nil, nil) }
        var request = URLRequest(url: url)
        request.setValue("image/*", forHTTPHeaderField: "Accept")
        let operation = HTTPRequestOperation(request: request)
        operation.responseSerializer = ImageResponseSerializer()
        operation.setCompletionBlockWithSuccess({ _, image in
            completion(image as? Image, nil)
        }, failure: { _, error in
            completion(nil, error)
        })
        User.profileImageQueue.addOperation(operation)
    }
}

/// `Post`.
struct Post: Sendable {
    let postID: Int
    let text: String
    let user: User

    init(attributes: [String: Any]) {
        postID = Int(attributes["id"] as? String ?? "") ?? 0
        text = attributes["text"] as? String ?? ""
        user = User(attributes: attributes["user"] as? [String: Any] ?? [:])
    }

    static func posts(fromJSON json: Any?) -> [Post] {
        ((json as? [String: Any])?["data"] as? [[String: Any]] ?? []).map(Post.init(attributes:))
    }

    /// `+globalTimelinePostsWithBlock:` as moved over from 2.x.
    @discardableResult
    static func globalTimelinePosts(path: String = "stream/0/posts/stream/global",
                                    withBlock block: @escaping @Sendable ([Post], Error?) -> Void) -> URLSessionDataTask? {
        AppDotNetAPIClient.shared.get(path, parameters: nil, success: { _, json in
            block(posts(fromJSON: json), nil)
        }, failure: { _, error in
            block([], error)
        })
    }

    /// The same, modernised: `async`, and cancelled with the awaiting task.
    static func globalTimelinePosts(path: String = "stream/0/posts/stream/global") async throws -> [Post] {
        let (_, json) = try await AppDotNetAPIClient.shared.get(path)
        return posts(fromJSON: json)
    }

    /// Or decoded straight into Swift types.
    struct Timeline: Decodable, Sendable {
        struct Entry: Decodable, Sendable {
            struct Author: Decodable, Sendable { let id: String; let username: String }
            let id: String
            let text: String
            let user: Author
        }
        let data: [Entry]
    }

    static func decodedGlobalTimeline() async throws -> Timeline {
        try await AppDotNetAPIClient.shared.get("stream/0/posts/stream/global", as: Timeline.self)
    }
}

final class PortedExampleClientTests: XCTestCase {
    func testTheBlockFormMovedOverFrom2x() {
        let done = expectation(description: "timeline")
        let result = Locked<([Post], Error?)>(([], nil))
        let task = Post.globalTimelinePosts { posts, error in
            result.value = (posts, error)
            done.fulfill()
        }
        XCTAssertNotNil(task)
        wait(for: [done], timeout: 20)
        XCTAssertNil(result.value.1)
        XCTAssertEqual(result.value.0.map(\.postID), [1, 2])
        XCTAssertEqual(result.value.0.map(\.text), ["first post", "second post"])
        XCTAssertEqual(result.value.0.map(\.user.username), ["mattt", "kcharwood"])
    }

    func testTheBlockFormReportsAFailureWithAnEmptyList() {
        let done = expectation(description: "timeline")
        let result = Locked<([Post], Error?)>(([], nil))
        Post.globalTimelinePosts(path: "stream/0/posts/stream/broken") { posts, error in
            result.value = (posts, error)
            done.fulfill()
        }
        wait(for: [done], timeout: 20)
        XCTAssertEqual(result.value.0.count, 0)
        let error = result.value.1 as NSError?
        XCTAssertEqual(error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual((error?.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse)?.statusCode, 503)
    }

    func testTheAsyncForm() async throws {
        let posts = try await Post.globalTimelinePosts()
        XCTAssertEqual(posts.map(\.user.userID), [10, 11])
        do {
            _ = try await Post.globalTimelinePosts(path: "stream/0/posts/stream/broken")
            XCTFail("a 503 must throw")
        } catch {
            XCTAssertEqual(error.afnetworking.kind, .http(status: 503, body: Data("maintenance".utf8)))
        }
    }

    func testTheDecodableForm() async throws {
        let timeline = try await Post.decodedGlobalTimeline()
        XCTAssertEqual(timeline.data.map(\.user.username), ["mattt", "kcharwood"])
    }

    func testAvatarsThroughOperationsOnTheProfileImageQueue() async throws {
        let posts = try await Post.globalTimelinePosts()
        let sizes = Locked<[Int: Int]>([:])
        let done = expectation(description: "avatars")
        done.expectedFulfillmentCount = posts.count
        for post in posts {
            post.user.loadProfileImage { image, error in
                XCTAssertNil(error)
                sizes.withLock { $0[post.user.userID] = image?.pixelWidth }
                done.fulfill()
            }
        }
        await fulfillment(of: [done], timeout: 20)
        XCTAssertEqual(sizes.value, [10: 48, 11: 96])
    }
}
