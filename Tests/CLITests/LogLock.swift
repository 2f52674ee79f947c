import Foundation
@testable import EventLog

/// Another process's write lock on a server's log, as a backup or a slow disk would hold it:
/// the server decides changes but cannot commit them until `release`.
final class LogLock {
    private let store: EventStore

    init(_ server: ServerProcess) throws {
        store = try EventStore(path: server.dataDirectory.appendingPathComponent("birthdayquest.sqlite").path,
                               options: StoreOptions(synchronous: .off, checkIntegrity: false))
        try store.executeForTesting("BEGIN IMMEDIATE")
    }

    func release() throws { try store.executeForTesting("ROLLBACK") }

    deinit { store.close() }
}
