#!/usr/bin/env bash
# Installs what zoobench needs to build, export models and run its tests on Debian 12.
# Idempotent: packages already present are not touched, so `make test` can call it every time.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev python3-torch python3-torchvision python3-yaml
  python3-dev pybind11-dev
  python3-opencv python3-matplotlib python3-tqdm python3-onnx python3-sklearn
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libssl-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  # tests/slurm: a one-node Slurm cluster started by the test (scripts/slurm/)
  slurm-wlm munge
)
# Browser tests of the HTML report; skip with ZOOBENCH_NO_BROWSER=1.
if [[ "${ZOOBENCH_NO_BROWSER:-0}" != 1 ]]; then
  PACKAGES+=(chromium)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "setup-deps: need root to install: ${missing[*]} (run as root or install sudo)" >&2
    exit 2
  fi
fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
