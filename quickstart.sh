#!/usr/bin/env bash
# Install autoformalize into .venv and run it on the bundled example project.
set -euo pipefail
cd "$(dirname "$0")"

# First, so that a machine that cannot run the sandbox stops at once, before anything is downloaded.
bash scripts/bubblewrap.sh

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# constraints.txt: the versions CI tested (scripts/lock.sh writes it).
.venv/bin/python -m pip install --quiet -c constraints.txt -e ".[test]"
# Codex CLI, a Worker engine the tests run for real, at the version CI tested (scripts/codex/package-lock.json).
if command -v npm >/dev/null 2>&1; then
    npm ci --silent --no-audit --no-fund --prefix scripts/codex
    ln -sf ../../scripts/codex/node_modules/.bin/codex .venv/bin/codex
else
    echo "npm was not found: the Codex Worker's tests will be skipped (install Node.js and npm, then run this again)" >&2
fi

demo=demo/numerics
run() { echo; echo "\$ autoformalize $*"; .venv/bin/autoformalize "$@"; }
commit() { git -C "$demo" -c user.name=demo -c user.email=demo@example.invalid commit --quiet -m "$1"; }
if [ -d "$demo/.git" ]; then
    # Its cycles are work: a second run keeps them.
    echo "keeping $demo and its history (delete it to start over)"
else
    mkdir -p demo
    cp -R examples/numerics "$demo"
    git -C "$demo" init --quiet --initial-branch=main
    git -C "$demo" add -A
    commit "Example project"
    run init "$demo"
    git -C "$demo" add -A
    commit "autoformalize init"
fi
run sorries --repo "$demo"
run status --repo "$demo"
# Without Lean or a key here, the dry run names what a real cycle would still need, and exits 2.
run cycle --dry-run --repo "$demo" || echo "(the dry run exited $?: above, what a real cycle still needs here)"
