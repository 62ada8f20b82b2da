@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A persistent storage loads its cookies from the file an earlier process
/// wrote; corelibs loses the Secure flag on the way (it writes a Bool and
/// reads a String). The library restores it before it reads or writes the
/// storage, so a Secure cookie never goes out over plain http after a restart.
final class CookiePersistenceTests: XCTestCase {
    private var files: [String] = []

    override func tearDown() {
        // Only the files this test made the storages write.
        for file in files { try? FileManager.default.removeItem(atPath: file) }
        super.tearDown()
    }

    /// A storage of its own, persisted to its own file (as after a restart,
    /// when `previous` names a file written by an earlier storage, that file's
    /// content is what it loads).
    private func storage(loading previous: String? = nil) throws -> HTTPCookieStorage {
        let identifier = "afn-tests-\(UUID().uuidString)"
        if let previous {
            // The path the new storage will read: the same folder, its own name.
            let path = (previous as NSString).deletingLastPathComponent + "/.cookies." + identifier
            try FileManager.default.copyItem(atPath: previous, toPath: path)
            files.append(path)
        }
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: identifier)
        let path = try XCTUnwrap(CookiePersistence.persistencePath(of: storage), "a group container storage is persistent")
        if !files.contains(path) { files.append(path) }
        return storage
    }

    func testASecureCookieLoadedFromDiskIsStillSecure() throws {
        let before = try storage()
        let site = try XCTUnwrap(URL(string: "https://persist.example/login"))
        CookieJar.store(["sid=s3cret; Secure; Max-Age=3600; Path=/", "plain=1; Max-Age=3600; Path=/"], for: site, in: before)
        XCTAssertEqual(before.cookies?.first { $0.name == "sid" }?.isSecure, true)
        let file = try XCTUnwrap(CookiePersistence.persistencePath(of: before))
        XCTAssertTrue(FileManager.default.fileExists(atPath: file), "corelibs wrote the persistent cookies")

        let after = try storage(loading: file)
        // What corelibs itself made of the file (the defect being worked around).
        XCTAssertEqual(after.cookies?.first { $0.name == "sid" }?.isSecure, false, "corelibs now keeps Secure across a restart: drop the workaround")

        let http = try XCTUnwrap(URL(string: "http://persist.example/"))
        XCTAssertEqual(CookieJar.header(for: http, from: after), "plain=1", "never over plain http")
        // Both over https (in either order: corelibs keeps no creation time across a restart).
        let secureHeader = try XCTUnwrap(CookieJar.header(for: try XCTUnwrap(URL(string: "https://persist.example/")), from: after))
        XCTAssertEqual(Set(secureHeader.components(separatedBy: "; ")), ["sid=s3cret", "plain=1"])
        XCTAssertEqual(after.cookies?.first { $0.name == "sid" }?.isSecure, true, "code reading the storage sees it Secure too")
        XCTAssertEqual(after.cookies?.first { $0.name == "plain" }?.isSecure, false)

        // An insecure origin cannot replace it now (6265bis).
        CookieJar.store(["sid=forged; Max-Age=3600; Path=/"], for: http, in: after)
        XCTAssertEqual(after.cookies?.first { $0.name == "sid" }?.value, "s3cret")
    }

    func testTheFirstUseByStoringRestoresToo() throws {
        let before = try storage()
        CookieJar.store(["k=v; Secure; Max-Age=3600"], for: try XCTUnwrap(URL(string: "https://first.example/")), in: before)
        let after = try storage(loading: try XCTUnwrap(CookiePersistence.persistencePath(of: before)))
        CookieJar.store(["k=forged; Max-Age=3600"], for: try XCTUnwrap(URL(string: "http://first.example/")), in: after)
        XCTAssertEqual(after.cookies?.map(\.value), ["v"])
        XCTAssertEqual(after.cookies?.first?.isSecure, true)
    }

    func testAnEphemeralStorageHasNoFile() {
        let configuration = URLSessionConfiguration.ephemeral
        if let storage = configuration.httpCookieStorage {
            XCTAssertNil(CookiePersistence.persistencePath(of: storage))
        }
    }
}
