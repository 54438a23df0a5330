#!/usr/bin/env bash
# Installs and starts what a fresh Debian machine lacks for Baton and its tests (see shared notes/toolchain.md).
# Usage: scripts/ensure-system.sh [--runtime]   (--runtime: only what `baton serve` needs)
set -euo pipefail
runtime_only=false; [ "${1:-}" = "--runtime" ] && runtime_only=true
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
say() { echo "== $*"; }

apt_install() {
  say "installing $*"
  if [ -z "${BATON_APT_UPDATED:-}" ]; then $SUDO apt-get update -qq; export BATON_APT_UPDATED=1; fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
command -v ansible-playbook >/dev/null || missing+=(ansible-core)
command -v ssh >/dev/null || missing+=(openssh-client)
command -v git >/dev/null || missing+=(git)
command -v bwrap >/dev/null || missing+=(bubblewrap)  # the run sandbox (BATON_SANDBOX)
if ! $runtime_only; then
  [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
  command -v ip >/dev/null && command -v ss >/dev/null || missing+=(iproute2)  # SSH test hosts in network namespaces
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v promtool >/dev/null || missing+=(prometheus)  # `promtool check metrics/rules`: /metrics and the Grafana dashboard
  command -v openssl >/dev/null || missing+=(openssl)
  command -v sudo >/dev/null || missing+=(sudo)  # the executor's become test
  command -v pg_ctlcluster >/dev/null || missing+=(postgresql)
  command -v redis-server >/dev/null || missing+=(redis-server)
  command -v shellcheck >/dev/null || missing+=(shellcheck)  # the AI draft check's bash lint (without it, only bash -n)
fi
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

if ! command -v pnpm >/dev/null || [ "$(pnpm --version 2>/dev/null)" != "10.34.9" ]; then
  say "installing pnpm 10.34.9"
  $SUDO npm install -g pnpm@10.34.9 >/dev/null
fi

$runtime_only && exit 0

if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  say "starting PostgreSQL"
  version=$(ls /etc/postgresql | sort -V | tail -1)
  hba=/etc/postgresql/$version/main/pg_hba.conf
  # Tests connect as postgres over TCP without a password, as on the development machines.
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
    $SUDO sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  fi
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
if ! psql -h 127.0.0.1 -U postgres -lqt 2>/dev/null | cut -d'|' -f1 | grep -qw test; then
  psql -h 127.0.0.1 -U postgres -c 'create database test' >/dev/null
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  say "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
