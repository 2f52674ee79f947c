import JSON
import Testing
import SeededRandom

private func patchError(_ ops: [PatchOp], _ document: JSONValue) -> JSONPatchError? {
    do throws(JSONPatchError) {
        _ = try JSONPatch.apply(ops, to: document)
        return nil
    } catch {
        return error
    }
}

@Suite struct JSONPointerTests {
    @Test func escaping() throws {
        #expect(JSONPatch.escapeToken("plain") == "plain")
        #expect(JSONPatch.escapeToken("a/b~c") == "a~1b~0c")
        #expect(JSONPatch.escapeToken("~1") == "~01")
        #expect(JSONPatch.pointer([]) == "")
        #expect(JSONPatch.pointer([""]) == "/")
        #expect(JSONPatch.pointer(["game", "a/b", "~", "0"]) == "/game/a~1b/~0/0")
        #expect(try JSONPatch.tokens(of: "/game/a~1b/~0/0") == ["game", "a/b", "~", "0"])
        #expect(try JSONPatch.tokens(of: "/~01") == ["~1"])
        #expect(try JSONPatch.tokens(of: "") == [])
        #expect(try JSONPatch.tokens(of: "/") == [""])
        #expect(try JSONPatch.tokens(of: "//") == ["", ""])
        #expect(try JSONPatch.tokens(of: "/é😀") == ["é😀"])
    }

    @Test func roundTripOfRandomTokens() throws {
        var rng = SplitMix64(seed: 6901)
        for _ in 0..<200 {
            let tokens = (0..<Int.random(in: 0...4, using: &rng)).map { _ in RandomJSON.string(&rng) }
            #expect(try JSONPatch.tokens(of: JSONPatch.pointer(tokens)) == tokens)
        }
    }

    @Test(arguments: ["a", "/~", "/~2", "/a~"])
    func malformedPointers(_ pointer: String) {
        #expect(throws: JSONPatchError.self) { try JSONPatch.tokens(of: pointer) }
    }
}

@Suite struct JSONPatchTests {
    let document: JSONValue = ["game": ["points": 10, "a/b": ["~": 1]], "timeline": [1, 2], "flag": true]

    @Test func opWireForm() throws {
        let ops: [PatchOp] = [
            .add(path: "/timeline/-", value: ["seq": 3]),
            .remove(path: "/flag"),
            .replace(path: "/game/points", value: 20),
        ]
        #expect(ops[0].json == ["op": "add", "path": "/timeline/-", "value": ["seq": 3]])
        #expect(ops[1].json.serialized(sortedKeys: true) == #"{"op":"remove","path":"/flag"}"#)
        #expect(ops[2].json.serialized(sortedKeys: true) == #"{"op":"replace","path":"/game/points","value":20}"#)
        for op in ops {
            #expect(try PatchOp(json: op.json) == op)
            var direct: [UInt8] = []
            op.write(to: &direct, sortedKeys: true)
            #expect(String(decoding: direct, as: UTF8.self) == op.json.serialized(sortedKeys: true))
        }
        var awkward: [UInt8] = []
        PatchOp.add(path: "/a\"b", value: ["z": 1, "y": [nil]]).write(to: &awkward, sortedKeys: true)
        #expect(String(decoding: awkward, as: UTF8.self) == #"{"op":"add","path":"/a\"b","value":{"y":[null],"z":1}}"#)
        #expect(try PatchOp(json: ["op": "add", "path": "/x", "value": nil]) == .add(path: "/x", value: nil))
    }

    @Test(arguments: [
        ["op": "move", "path": "/a", "from": "/b"],
        ["op": "add", "path": "/a"],
        ["op": "replace", "path": "/a"],
        ["path": "/a"],
        ["op": "remove"],
        ["op": "remove", "path": 3],
        [1, 2],
    ] as [JSONValue])
    func invalidWireForms(_ json: JSONValue) {
        #expect(throws: JSONPatchError.self) { try PatchOp(json: json) }
    }

    @Test func applyObjectMembers() throws {
        let result = try JSONPatch.apply([
            .replace(path: "/game/points", value: 20),
            .add(path: "/game/new", value: "x"),
            .add(path: "/game/a~1b/~0", value: 2),
            .remove(path: "/flag"),
        ], to: document)
        #expect(result == ["game": ["points": 20, "new": "x", "a/b": ["~": 2]], "timeline": [1, 2]])
    }

    @Test func applyArrays() throws {
        let result = try JSONPatch.apply([
            .add(path: "/timeline/-", value: 3),
            .add(path: "/timeline/0", value: 0),
            .add(path: "/timeline/4", value: 4),
            .replace(path: "/timeline/1", value: 10),
            .remove(path: "/timeline/2"),
        ], to: document)
        #expect(result["timeline"] == [0, 10, 3, 4])
    }

    @Test func applyAtRoot() throws {
        #expect(try JSONPatch.apply([.replace(path: "", value: 1)], to: document) == 1)
        #expect(try JSONPatch.apply([.add(path: "", value: [])], to: document) == [])
        #expect(try JSONPatch.apply([], to: document) == document)
        #expect(try JSONPatch.apply([.add(path: "/", value: 1)], to: [:]) == ["": 1])
    }

    @Test func applyErrors() {
        let failing: [PatchOp] = [
            .remove(path: ""),
            .add(path: "/missing/x", value: 1),
            .add(path: "/timeline/3", value: 1),
            .add(path: "/timeline/01", value: 1),
            .add(path: "/timeline/x", value: 1),
            .add(path: "/flag/x", value: 1),
            .remove(path: "/missing"),
            .remove(path: "/timeline/2"),
            .remove(path: "/timeline/-"),
            .replace(path: "/missing", value: 1),
            .replace(path: "/timeline/2", value: 1),
            .replace(path: "/timeline/-1", value: 1),
            .replace(path: "/timeline/0/x", value: 1),
            .replace(path: "/game/points/x", value: 1),
            .replace(path: "game", value: 1),
        ]
        for op in failing {
            let error = patchError([op], document)
            #expect(error?.path == op.path, "\(op) should fail")
            #expect(error?.description.contains(op.path) == true)
        }
        // An error mid-way leaves nothing applied: the result is never returned.
        #expect(patchError([.remove(path: "/flag"), .remove(path: "/flag")], document) != nil)
    }

    // MARK: Diff

    @Test func diffRules() {
        #expect(JSONPatch.diff(document, document).isEmpty)
        #expect(JSONPatch.diff(1, 2) == [.replace(path: "", value: 2)])
        #expect(JSONPatch.diff(1, 1.0) == [.replace(path: "", value: 1.0)])
        #expect(JSONPatch.diff(["a": 1], [1]) == [.replace(path: "", value: [1])])
        #expect(JSONPatch.diff(["z": 1, "a": 1, "m": ["x": 1]], ["z": 2, "b": nil, "m": ["x": 1, "y~/": 2]]) == [
            .remove(path: "/a"),
            .add(path: "/b", value: nil),
            .add(path: "/m/y~0~1", value: 2),
            .replace(path: "/z", value: 2),
        ])
        #expect(JSONPatch.diff([1, 2], [1, 2, 3, [4]], path: "/t") == [
            .add(path: "/t/-", value: 3),
            .add(path: "/t/-", value: [4]),
        ])
        // Only some members differ: the ops still come in key order, unchanged members give none.
        #expect(JSONPatch.diff(["b": 1, "a": ["y": 1, "x": 2], "c": 5], ["b": 2, "a": ["y": 1, "x": 3], "c": 5]) == [
            .replace(path: "/a/x", value: 3), .replace(path: "/b", value: 2),
        ])
        // A removed and an added key, the same count on both sides.
        #expect(JSONPatch.diff(["a": 1, "b": 2], ["a": 1, "c": 2]) == [.remove(path: "/b"), .add(path: "/c", value: 2)])
        #expect(JSONPatch.diff([1, 2], [1]) == [.replace(path: "", value: [1])])
        #expect(JSONPatch.diff([1, 2], [1, 3, 4]) == [.replace(path: "", value: [1, 3, 4])])
        #expect(JSONPatch.diff([], [1]) == [.add(path: "/-", value: 1)])
        #expect(JSONPatch.diff(["t": [["x": 1]]], ["t": [["x": 2]]]) == [.replace(path: "/t", value: [["x": 2]])])
    }

    @Test func diffThenApplyOnRandomViews() throws {
        var seen: Set<String> = []
        for seed in UInt64(1)...300 {
            var rng = SplitMix64(seed: seed)
            var old = RandomJSON.viewLike(&rng)
            for step in 0..<4 {
                let new = RandomJSON.evolve(old, &rng)
                let ops = JSONPatch.diff(old, new)
                #expect(try JSONPatch.apply(ops, to: old) == new, "seed \(seed) step \(step)")
                #expect(ops.isEmpty == (old == new), "seed \(seed) step \(step)")
                for op in ops { seen.insert(op.path == "/timeline/-" ? "append" : op.json["op"]?.stringValue ?? "?") }
                // The timeline only grows, so it must only ever see appends.
                for op in ops where op.path.hasPrefix("/timeline") {
                    guard case .add(let path, _) = op else {
                        Issue.record("seed \(seed) step \(step): non-append timeline op \(op)")
                        continue
                    }
                    #expect(path == "/timeline/-", "seed \(seed) step \(step)")
                }
                // The wire form survives serialization.
                let wire = JSONValue.array(ops.map(\.json)).serialized()
                let decoded = try JSONParser.parse(wire).arrayValue?.map { json throws(JSONPatchError) in try PatchOp(json: json) }
                #expect(decoded == ops, "seed \(seed) step \(step)")
                old = new
            }
        }
        // The generator really exercises every kind of op.
        #expect(seen == ["append", "add", "remove", "replace"])
    }

    /// The diff is fast in how it finds the differing members, but its output is fixed: these
    /// are the rules written the slow, obvious way, and both must give the very same ops.
    private static func referenceDiff(_ old: JSONValue, _ new: JSONValue, path: String = "") -> [PatchOp] {
        if old == new { return [] }
        switch (old, new) {
        case (.object(let before), .object(let after)):
            return Set(before.keys).union(after.keys).sorted().flatMap { key -> [PatchOp] in
                let memberPath = path + "/" + JSONPatch.escapeToken(key)
                switch (before[key], after[key]) {
                case (let was?, let now?): return referenceDiff(was, now, path: memberPath)
                case (_?, nil): return [.remove(path: memberPath)]
                case (nil, let now?): return [.add(path: memberPath, value: now)]
                case (nil, nil): return []
                }
            }
        case (.array(let before), .array(let after)) where after.count > before.count && after.starts(with: before):
            return after[before.count...].map { .add(path: path + "/-", value: $0) }
        default:
            return [.replace(path: path, value: new)]
        }
    }

    @Test func diffGivesTheReferenceOps() {
        for seed in UInt64(1)...300 {
            var rng = SplitMix64(seed: seed)
            var old = RandomJSON.viewLike(&rng)
            for step in 0..<4 {
                let new = RandomJSON.evolve(old, &rng)
                #expect(JSONPatch.diff(old, new) == Self.referenceDiff(old, new), "seed \(seed) step \(step)")
                old = new
            }
            let a = RandomJSON.value(&rng, depth: 4)
            let b = RandomJSON.value(&rng, depth: 4)
            #expect(JSONPatch.diff(a, b, path: "/x") == Self.referenceDiff(a, b, path: "/x"), "seed \(seed)")
        }
    }

    @Test func diffThenApplyOnArbitraryValues() throws {
        for seed in UInt64(1000)...1300 {
            var rng = SplitMix64(seed: seed)
            let a = RandomJSON.value(&rng, depth: 4)
            let b = RandomJSON.value(&rng, depth: 4)
            #expect(try JSONPatch.apply(JSONPatch.diff(a, b), to: a) == b, "seed \(seed)")
        }
    }
}
