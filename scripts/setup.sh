#!/usr/bin/env bash
# Set up a development environment: system packages (when root), a virtualenv, the package.
# Usage: scripts/setup.sh [--system]   (--system also installs what the tests need from Debian)
set -euo pipefail
cd "$(dirname "$0")/.."

want_system=0
[ "${1:-}" = "--system" ] && want_system=1

if [ "$want_system" = 1 ]; then
  need=()
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || need+=(postgresql)
  command -v chromium >/dev/null 2>&1 || need+=(chromium)  # the browser tests' Chromium (Playwright's executable_path)
  command -v npm >/dev/null 2>&1 || need+=(npm)  # installs axe-core for the accessibility tests (below)
  command -v git >/dev/null 2>&1 || need+=(git)
  command -v sha256sum >/dev/null 2>&1 || need+=(coreutils)
  if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing system packages: ${need[*]}"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    else
      echo "missing system packages: ${need[*]} (run as root to install them)" >&2
    fi
  fi
  # axe-core, which the accessibility tests inject into the inspector's pages: a pinned version in
  # .cache/axe-core (git-ignored), installed once; a later run with the same version does nothing.
  axe_version=4.14.1
  axe_dir=.cache/axe-core
  if ! grep -qs "\"version\": \"$axe_version\"" "$axe_dir/node_modules/axe-core/package.json"; then
    if command -v npm >/dev/null 2>&1; then
      mkdir -p "$axe_dir"
      npm install --prefix "$axe_dir" --no-save --no-package-lock --no-audit --no-fund --silent \
        "axe-core@$axe_version" >/dev/null
    else
      echo "npm is missing: axe-core for the accessibility tests is not installed" >&2
    fi
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
