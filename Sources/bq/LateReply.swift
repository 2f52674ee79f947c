import Foundation
import Client

/// What to show when the answer to a mutation whose wait ended unconfirmed arrives after all.
func lateReplyLine(_ op: String, _ result: Result<Reply, ClientError>, style: Style) -> String {
    let what = op.replacingOccurrences(of: "_", with: " ")
    switch result {
    case .success(let reply):
        return style.green("✓ ") + "The \(what) sent earlier went through [version \(reply.version ?? 0)]."
    case .failure(let error):
        return style.red("✗ ") + "The \(what) sent earlier was refused: \(error.description)"
    }
}
