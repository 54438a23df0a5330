#!/usr/bin/env bash
# Quick start: installs what Baton needs (pnpm, ansible-core, dependencies), builds, and starts it in
# embedded mode (SQLite in ./data, executors in-process) on http://127.0.0.1:8080/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-system.sh --runtime
pnpm install --frozen-lockfile
pnpm build
exec bin/baton serve
