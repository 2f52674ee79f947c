#!/bin/sh
# Writes Sources/Server/BuiltInSeed.swift from seed/birthdayquest.json, so that a `bq serve`
# started away from the repository still has the shipped seed. Run it after editing the seed:
# a test (BuiltInSeedTests) fails until the two agree.
set -eu
cd "$(dirname "$0")/.."
seed=seed/birthdayquest.json
out=Sources/Server/BuiltInSeed.swift
if grep -q '"""#' "$seed"; then
    echo "$seed holds \"\"\"#, which would end the Swift literal" >&2
    exit 1
fi
{
    echo "// Made by scripts/embed-seed.sh from $seed: edit the seed, then run the script."
    echo
    echo "/// The shipped seed, built into the executable: a server started in another working"
    echo "/// directory, or from a copied binary, still seeds its games on first launch."
    echo "enum BuiltInSeed {"
    echo "    /// The seed path this copy stands in for when no such file is in the working directory."
    echo "    static let path = \"$seed\""
    echo "    /// The file's bytes, final newline included."
    echo "    static let text = #\"\"\""
    cat "$seed"
    echo
    echo "\"\"\"#"
    echo "}"
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
