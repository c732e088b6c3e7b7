#!/usr/bin/env bash
# Prepares .gpu-deps/: the C++ libraries zoobench builds with (yaml-cpp, fmt, CLI11, OpenSSL,
# nlohmann-json, RE2, GoogleTest, Google Benchmark), unpacked from Debian's packages, for the GPU
# machine, where nothing can be installed. Run here; `device` calls carry .gpu-deps.
# The GPU image is a newer glibc/libstdc++ than Debian 12's, so these binaries run there.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.gpu-deps
PACKAGES=(libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9
          libssl-dev libssl3 libre2-dev libre2-9
          googletest libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian)
# .complete holds the package list it was made from: a list that changed (a new dependency)
# fetches again instead of carrying a folder without it.
if [[ -f $OUT/.complete && "$(cat "$OUT/.complete")" == "${PACKAGES[*]}" ]]; then
  echo "fetch-gpu-deps: $OUT is ready"
  exit 0
fi
rm -rf "$OUT" && mkdir -p "$OUT/debs"
(cd "$OUT/debs" && apt-get download "${PACKAGES[@]}" >/dev/null)
for deb in "$OUT"/debs/*.deb; do dpkg -x "$deb" "$OUT/root"; done
rm -rf "$OUT/debs" "$OUT/root/usr/share/doc" "$OUT/root/usr/share/man"
# zoobench links OpenSSL's shared libcrypto; its static archives are 10 MB of the 64 MB a
# device call can carry.
rm -f "$OUT"/root/usr/lib/x86_64-linux-gnu/lib{crypto,ssl}.a
echo "${PACKAGES[*]}" > "$OUT/.complete"
du -sh "$OUT"
