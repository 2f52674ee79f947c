import Domain
import JSON
import Protocol
import Views

/// Each viewer's view of a game's durable state, kept per version: many connections of one
/// viewer share one projection, one patch per commit and one encoding. A viewer's view is
/// updated in place from what a turn's commits touched, not projected afresh; the full diff
/// is the fallback. Loop thread only (part of a `GameHub`).
struct ViewCache {
    private var views: [Viewer: CachedView] = [:]
    /// Each viewer's current view as JSON text, for `state` replies and snapshots: a flood of
    /// reads or of new subscribers then costs a copy each, not an encoding of the whole view.
    private var encodedViews: [Viewer: (version: Int, bytes: [UInt8])] = [:]
    /// Each viewer's current view's `ViewDigest`, for resumes at the current version: after a
    /// restart every client resumes there at once, most of them as one of a few viewers.
    private var digests: [Viewer: (version: Int, digest: String)] = [:]

    /// `viewer`'s view of `state`.
    mutating func view(of state: GameState, for viewer: Viewer) -> JSONValue {
        if let cached = views[viewer], cached.version == state.version { return cached.view }
        let fresh = Views.view(state, for: viewer)
        views[viewer] = CachedView(version: state.version, view: fresh)
        return fresh
    }

    /// `viewer`'s view of `state` as JSON text.
    mutating func encodedView(of state: GameState, for viewer: Viewer) -> [UInt8] {
        if let cached = encodedViews[viewer], cached.version == state.version { return cached.bytes }
        var bytes: [UInt8] = []
        view(of: state, for: viewer).write(to: &bytes)
        encodedViews[viewer] = (state.version, bytes)
        return bytes
    }

    /// The `ViewDigest` of `viewer`'s view of `state`.
    mutating func digest(of state: GameState, for viewer: Viewer) -> String {
        if let cached = digests[viewer], cached.version == state.version { return cached.digest }
        let digest = ViewDigest.of(view(of: state, for: viewer))
        digests[viewer] = (state.version, digest)
        return digest
    }

    /// One patch per distinct viewer among `viewers` whose view is cached, from that view to its
    /// view of `state`: re-projecting only what `touched` names when the cached view is the one
    /// at `versionBefore` (the turn's start), else by a full diff.
    mutating func patches(for viewers: some Sequence<Viewer>, to state: GameState, from versionBefore: Int,
                          touched: Touched) -> [Viewer: ViewerPatch] {
        var patches: [Viewer: ViewerPatch] = [:]
        let version = state.version
        for viewer in viewers where patches[viewer] == nil {
            // Taken out of the cache so the update below owns the view and edits it in place.
            guard let cached = views.removeValue(forKey: viewer) else { continue }
            let from = cached.version
            var current = cached.view
            let ops: [PatchOp]
            if from == versionBefore {
                ops = updateView(&current, to: state, for: viewer, touched: touched)
            } else {
                let previous = current
                current = Views.view(state, for: viewer)
                ops = JSONPatch.diff(previous, current)
            }
            views[viewer] = CachedView(version: version, view: current)
            patches[viewer] = ViewerPatch(from: from, to: version, view: current,
                                          bytes: Wire.patch(from: from, to: version, ops: ops))
        }
        return patches
    }
}

struct ViewerPatch {
    let from: Int
    let to: Int
    let view: JSONValue
    let bytes: [UInt8]
}

struct CachedView {
    let version: Int
    let view: JSONValue
}

