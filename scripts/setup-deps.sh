#!/usr/bin/env bash
# Installs what zoobench needs on Debian 12: `setup-deps.sh demo` what building zoobench and
# running the demo need; `setup-deps.sh test` (the default) that and what the tests need.
# Idempotent: packages already present are not touched, so `make test` can call it every time.
set -euo pipefail

WHAT=${1:-test}
DEMO=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev python3-torch python3-torchvision python3-yaml
  python3-dev pybind11-dev
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libssl-dev libre2-dev
)
TEST=(
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  # tests/slurm: a one-node Slurm cluster started by the test (scripts/slurm/)
  slurm-wlm munge
)
case $WHAT in
  demo) PACKAGES=("${DEMO[@]}") ;;
  test) PACKAGES=("${DEMO[@]}" "${TEST[@]}")
    # Browser tests of the HTML report; skip with ZOOBENCH_NO_BROWSER=1.
    [[ "${ZOOBENCH_NO_BROWSER:-0}" == 1 ]] || PACKAGES+=(chromium) ;;
  *) echo "usage: $0 [demo|test]" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup-deps: all ${#PACKAGES[@]} packages for the $WHAT present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=sudo; else
    echo "setup-deps: the $WHAT needs ${#missing[@]} Debian package(s) not installed here, and" \
      "installing them needs root. As root, run:" >&2
    echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 2
  fi
fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
