import Foundation

/// gzip through the system's `gzip` command: an encoder independent of the
/// library's decoder, for bodies the tests serve.
enum GzipCommand {
    static func compress(_ data: Data, level: Int = 6) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-n", "-\(level)"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // Written from another thread: a large input would fill the pipe
        // while gzip's output is not being read.
        let writer = input.fileHandleForWriting
        DispatchQueue.global().async {
            writer.write(data)
            try? writer.close()
        }
        let result = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return result
    }
}
