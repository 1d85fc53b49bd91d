#!/usr/bin/env bash
# Installs the Debian 12 packages hamisim needs to build and test, if any is missing.
# The same list is used by the Dockerfile (deploy/) and CI (.ci/run).
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ ccache pkg-config
  libboost1.81-dev libboost-json1.81-dev
  libsimdjson-dev libxxhash-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev libssl-dev openssl libre2-dev
  clang-19 libclang-rt-19-dev llvm-19
  curl python3
  zsh fish  # the completion scripts are checked by the shells that run them (tests/cli)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing missing packages: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
