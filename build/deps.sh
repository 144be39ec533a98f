#!/bin/sh
# deps.sh: make sure every Debian package ktune needs is installed; install the missing ones when
# run as root, otherwise name them and stop. nvcc is not a Debian package: it is used when found
# (PATH, CUDA_HOME, /usr/local/cuda/bin) and its absence is reported, not fatal.
set -u
PKGS="clang-19 lld-19 llvm-19 libclang-rt-19-dev luajit libluajit-5.1-dev libsqlite3-dev sqlite3 \
libcjson-dev pkg-config make gcc xz-utils hipcc libamdhip64-dev libamdhip64-5"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "deps: installing$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
            echo "deps: apt-get failed to install:$missing" >&2; exit 1; }
    else
        echo "deps: missing Debian packages:$missing" >&2
        echo "deps: run 'sudo make deps' (or apt-get install$missing)" >&2
        exit 1
    fi
fi
nvcc=$(command -v nvcc 2>/dev/null || true)
[ -z "$nvcc" ] && [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ] && nvcc=$CUDA_HOME/bin/nvcc
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc" ]; then echo "deps: ok (nvcc: $nvcc)"
else echo "deps: ok; nvcc not found (PATH, CUDA_HOME, /usr/local/cuda/bin): sm_90a targets will be skipped"; fi
