import CAFCurl
import CAFOpenSSL

/// Keeps connections made under different security policies, client
/// identities and proxy credentials apart. Each partition but the standard
/// one (by its key, `Transfer.connectionPartition`) gets its own libcurl
/// share holding its own connection cache, so a connection verified under one
/// policy, or opened with one identity or one user's proxy credentials, is
/// never reused for a request under another. Network thread only.
final class ConnectionPartitions {
    private struct Partition {
        let share: UnsafeMutableRawPointer
        var users = 0
    }

    /// Idle partitions kept beyond this are freed (with their connections).
    private let capacity: Int
    private var partitions: [String: Partition] = [:]

    init(capacity: Int = 16) { self.capacity = capacity }

    /// Puts the transfer's easy handle in its partition, before it joins the
    /// multi handle. Transfers in the standard partition (the standard
    /// policy, no client identity, no proxy credentials) stay in the multi
    /// handle's own cache.
    func attach(_ transfer: Transfer) throws {
        guard let key = transfer.connectionPartition else { return }
        var partition: Partition
        if let existing = partitions[key] {
            partition = existing
        } else {
            guard let share = curl_share_init() else {
                throw CurlOptionError(code: CURLE_OUT_OF_MEMORY, what: "a connection partition")
            }
            let status = cafcurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_CONNECT.rawValue))
            guard status == CURLSHE_OK else {
                curl_share_cleanup(share)
                throw CurlOptionError(code: CURLE_FAILED_INIT, what: "a connection partition (CURLSHcode \(status.rawValue))")
            }
            partition = Partition(share: share)
        }
        try transfer.easy.set(CURLOPT_SHARE, pointer: partition.share)
        partition.users += 1
        partitions[key] = partition
    }

    /// Takes the easy handle out of its partition after it left the multi handle.
    func detach(_ transfer: Transfer) {
        guard let key = transfer.connectionPartition, var partition = partitions[key] else { return }
        _ = try? transfer.easy.set(CURLOPT_SHARE, pointer: nil)
        partition.users -= 1
        partitions[key] = partition
        evictIdlePartitions()
    }

    private func evictIdlePartitions() {
        guard partitions.count > capacity else { return }
        for (key, partition) in partitions where partition.users == 0 && partitions.count > capacity {
            if curl_share_cleanup(partition.share) == CURLSHE_OK {
                partitions[key] = nil
            }
        }
    }
}

extension ConnectionPartitions {
    /// The key of a transfer's partition: `base` (its options': policy,
    /// client identity) and, when it hands its proxy credentials, their
    /// SHA-256, so that each proxy identity has connections of its own and
    /// one identity still reuses its own. Never the credentials themselves:
    /// a key lives as long as its partition. `proxyCredentials` holds every
    /// credential the transfer sends its proxy, in a fixed order. Any thread
    /// (it touches no partition): the transfer is keyed as it is built.
    static func key(base: String?, proxyCredentials: [String]) throws -> String? {
        guard !proxyCredentials.isEmpty else { return base }
        var material: [UInt8] = []
        for part in proxyCredentials {
            // Each part after its length, so no two lists of parts run together into the same bytes.
            material += String(part.utf8.count).utf8
            material.append(UInt8(ascii: ":"))
            material += part.utf8
        }
        var digest = [UInt8](repeating: 0, count: 32)
        let hashed = material.withUnsafeBufferPointer { input in
            cafssl_sha256(input.baseAddress, input.count, &digest)
        }
        // EVP_Digest fails only without memory. Keyed by anything else, the
        // transfer could share a connection another identity opened: it fails.
        guard hashed == 1 else {
            throw CurlOptionError(code: CURLE_OUT_OF_MEMORY, what: "a connection partition (the proxy credentials' digest)")
        }
        let hexDigits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(digest.count * 2)
        for byte in digest {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0x0F)])
        }
        return "\(base ?? "standard")|proxy:\(String(decoding: hex, as: UTF8.self))"
    }
}
