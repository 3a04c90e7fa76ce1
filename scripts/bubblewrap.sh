#!/usr/bin/env bash
# Bubblewrap (bwrap) confines the code the Worker writes, and the tests run the real one. Install it with apt-get
# where that can be done without a password, let it create user namespaces, and check that it runs; otherwise stop
# with one message saying how. The quick start and CI both call this file.
set -euo pipefail

sandboxed() { bwrap --unshare-all --die-with-parent --ro-bind / / true 2>/dev/null; }
how="install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap; \
Arch: sudo pacman -S bubblewrap), then run this again"
if [ "$(uname -s)" != Linux ]; then
    echo "error: bubblewrap needs Linux; autoformalize's sandbox and its tests cannot run on $(uname -s)" >&2
    exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    # Only a sudo that asks no password: the quick start must not stop at a prompt.
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo="none"; fi
fi

if ! command -v bwrap >/dev/null 2>&1; then
    if [ "$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "error: bwrap (bubblewrap) is not installed and cannot be installed here without a password or apt-get: $how" >&2
        exit 1
    fi
    echo "installing bubblewrap with apt-get" >&2
    if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; } \
        >/dev/null || ! command -v bwrap >/dev/null 2>&1; then
        echo "error: apt-get could not install bubblewrap: $how" >&2
        exit 1
    fi
fi

if ! sandboxed && [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ] && [ "$sudo" != none ]; then
    # Ubuntu 24.04 and later: AppArmor keeps unprivileged programs (bwrap) from creating user namespaces.
    echo "allowing unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=0) for bwrap" >&2
    $sudo sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0 || true
fi
if ! sandboxed; then
    why=$(bwrap --unshare-all --die-with-parent --ro-bind / / true 2>&1 | tail -n 1 || true)
    echo "error: bwrap is installed but cannot create its namespaces here ($why): allow unprivileged user namespaces \
(sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04+, kernel.unprivileged_userns_clone=1 on \
older Debian), then run this again" >&2
    exit 1
fi
