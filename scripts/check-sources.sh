#!/usr/bin/env bash
# Source rules a compiler cannot check, run as the ctest `sources.rules`.
#   scripts/check-sources.sh [REPO_ROOT]
# - No std::filesystem::remove_all: PyTorch's pip wheels interpose their own std::filesystem
#   iterators, and remove_all crashed on the H200 with a call through a null pointer (twice in
#   `zoobench bisect`, 2026-12-01). Use remove_tree (src/zoobench/util/files.h).
set -uo pipefail
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
status=0
if hits=$(grep -rnE --include='*.cpp' --include='*.h' --include='*.cc' 'remove_all[[:space:]]*\(' src bench tests); then
  echo "std::filesystem::remove_all crashes with PyTorch's pip wheels; use remove_tree (src/zoobench/util/files.h):"
  echo "$hits"
  status=1
fi
exit $status
