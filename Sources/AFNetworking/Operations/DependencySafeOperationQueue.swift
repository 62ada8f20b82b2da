import Foundation

/// The `OperationQueue` the library makes (a manager's `operationQueue`):
/// `cancelAllOperations()` first holds every operation that has dependencies
/// until they have finished, so a cancelled dependent that nobody else holds
/// is not freed while a dependency still points at it (see `DependencyLifetime`).
final class DependencySafeOperationQueue: OperationQueue, @unchecked Sendable {
    // @unchecked: no state of its own; OperationQueue's is Foundation's.

    override func cancelAllOperations() {
        DependencyLifetime.holdDependents(in: self)
        super.cancelAllOperations()
    }
}
