#!/usr/bin/env bash
# Install autoformalize into .venv and run it on the bundled example project.
set -euo pipefail
cd "$(dirname "$0")"

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"

demo=demo/numerics
rm -rf "$demo"
mkdir -p demo
cp -R examples/numerics "$demo"
git -C "$demo" init --quiet --initial-branch=main
git -C "$demo" add -A
git -C "$demo" -c user.name=demo -c user.email=demo@example.invalid commit --quiet -m "Example project"

run() { echo; echo "\$ autoformalize $*"; .venv/bin/autoformalize "$@"; }
run init "$demo"
git -C "$demo" add -A
git -C "$demo" -c user.name=demo -c user.email=demo@example.invalid commit --quiet -m "autoformalize init"
run sorries --repo "$demo"
run status --repo "$demo"
run cycle --dry-run --repo "$demo"
