import Foundation

/// What a node does when one of its dependencies fails or is cancelled.
public enum DependencyFailurePolicy: Sendable, Equatable {
    /// The default: the node never starts; its outcome is `.skipped(because:)`.
    case cancel
    /// `Operation`'s own (2.x) behaviour: the node starts once its
    /// dependencies have finished, whatever they did.
    case runAnyway
}

/// A node of one graph. Equal only to itself.
public struct RequestGraphNode: Hashable, Sendable, CustomStringConvertible {
    /// The name given to `add(…)`, else "node N" (N from 1, in order of adding).
    public let name: String
    /// Which graph and which node in it: what equality compares.
    let graph: ObjectIdentifier
    let index: Int

    /// The node's name.
    public var description: String { name }

    /// Equal when the same node of the same graph.
    public static func == (lhs: RequestGraphNode, rhs: RequestGraphNode) -> Bool {
        lhs.graph == rhs.graph && lhs.index == rhs.index
    }

    /// Hashes the graph and the node's position in it.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(graph)
        hasher.combine(index)
    }
}

/// How a node ended.
public enum RequestGraphNodeOutcome: Sendable {
    /// Finished, not cancelled, no `error` (a `URLConnectionOperation`'s).
    case succeeded
    /// The operation's `error`, or what its builder threw.
    case failed(any Error)
    /// Cancelled by the caller, the graph, or its own `cancel()`.
    case cancelled
    /// A dependency failed, was cancelled or was skipped (policy `.cancel`);
    /// nothing was sent. Names that direct dependency.
    case skipped(because: RequestGraphNode)

    /// Whether the node succeeded.
    var isSuccess: Bool {
        if case .succeeded = self { return true }
        return false
    }
}

/// Every node's outcome, once the graph has finished.
public struct RequestGraphReport: Sendable {
    /// Each node's outcome.
    public let outcomes: [RequestGraphNode: RequestGraphNodeOutcome]

    /// Whether every node succeeded.
    public var allSucceeded: Bool { outcomes.values.allSatisfy(\.isSuccess) }

    /// The outcome of `node` (nil: not a node of this graph).
    public subscript(node: RequestGraphNode) -> RequestGraphNodeOutcome? { outcomes[node] }
}

/// Handed to a node's builder once every dependency has finished.
public struct RequestGraphResults: Sendable {
    let operations: [RequestGraphNode: Operation]

    /// The dependency's operation, finished (read `responseObject`,
    /// `response`, `error`…). A node that is not a dependency of the one being
    /// built traps: a builder reads only what it declared it depends on. A
    /// dependency that never had an operation (its builder threw, or it was
    /// skipped or cancelled before building; `.runAnyway` builds after it) is
    /// a finished, cancelled `Operation` of no other type.
    public subscript(node: RequestGraphNode) -> Operation {
        guard let operation = operations[node] else {
            preconditionFailure("\(node) is not a dependency of the node being built")
        }
        return operation
    }
}

/// Stands for a dependency that never had an operation, in `RequestGraphResults`.
final class UnbuiltNodeOperation: Operation, @unchecked Sendable {   // @unchecked: no state at all
    override var isFinished: Bool { true }
    override var isCancelled: Bool { true }
}

/// Why `RequestGraph.add(…)` refused a node.
public enum RequestGraphError: Error, Equatable, Sendable {
    /// A dependency that belongs to another graph.
    case foreignNode(RequestGraphNode)
    /// The operation's own `Operation` dependencies close a cycle (the names
    /// of its nodes along it, starting with the node being added).
    case cycle([String])
    /// The operation is executing, finished, or already in a graph.
    case alreadyEnqueued
    /// The graph has finished; make a new one.
    case finished
}
