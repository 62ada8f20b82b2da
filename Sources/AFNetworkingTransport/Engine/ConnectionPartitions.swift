import CAFCurl

/// Keeps connections made under different security policies apart. Each
/// non-standard policy (by fingerprint) gets its own libcurl share holding its
/// own connection cache, so a connection verified under one policy is never
/// reused for a request under another. Network thread only.
final class ConnectionPartitions {
    private struct Partition {
        let share: UnsafeMutableRawPointer
        var users = 0
    }

    /// Idle partitions kept beyond this are freed (with their connections).
    private let capacity: Int
    private var partitions: [String: Partition] = [:]

    init(capacity: Int = 16) { self.capacity = capacity }

    /// Puts the transfer's easy handle in its policy's partition, before it
    /// joins the multi handle. Transfers with the standard policy stay in the
    /// multi handle's own cache.
    func attach(_ transfer: Transfer) throws {
        guard let key = transfer.options.connectionPartition else { return }
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
        guard let key = transfer.options.connectionPartition, var partition = partitions[key] else { return }
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
