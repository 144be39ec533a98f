#!/bin/sh
# pack.sh: run HERE (Debian 12). Builds everything the GPU machine (Ubuntu 24.04, no network, no
# LuaJIT, no cJSON) needs and gathers it under the three folders the device tool carries:
#   out/bin     kt, bench_gemm
#   out/lib     libkt.so (tune.lua's FFI), libktrt.so/.a
#   out/device  gemm_check, ktrt_check, read.cubin, export/ (gemm_check's cubins), ktune.ktdb,
#               bin/luajit and lib/ (the shared libraries kt and libkt.so need that the GPU
#               machine lacks, under their sonames)
# There: `sh tests/device/run_all.sh` (it sets LD_LIBRARY_PATH=out/device/lib and
# PATH=out/device/bin:$PATH so ./tune runs on the carried luajit).
#
# Knobs: JOBS (make -j, default 2); KT_DEVICE_DB (default out/device/ktune.ktdb: the sm_90a
# kernels are generated into it here, where the compile cache is, so the GPU machine's sweep
# finds them built; KT_PACK_DB=0 skips that); KT_EXPORT_DB (default KT_DEVICE_DB, else
# out/test/dense.ktdb: the database whose ok sm_90a GEMM kernels gemm_check runs).
set -eu
cd "$(dirname "$0")/../.."
JOBS=${JOBS:-2}
DB=${KT_DEVICE_DB:-out/device/ktune.ktdb}

make -s -j"$JOBS" out/bin/kt out/lib/libkt.so out/lib/libktrt.so out/lib/libktrt.a out/bin/bench_gemm
make -s bench-read
sh tests/device/build.sh
mkdir -p out/device/bin out/device/lib

# bench_gemm's read-ceiling kernel: out/bench is not carried, so a copy goes into out/device.
if [ -f out/bench/read.cubin ]; then
    cp out/bench/read.cubin out/device/read.cubin
else
    rm -f out/device/read.cubin
    echo "pack.sh: no out/bench/read.cubin (no nvcc here): bench_gemm will report the read and copy ceilings as unavailable"
fi

# The device database with the sm_90a kernels built (the sweep there then compiles nothing that
# the toolchain fingerprint lets it reuse), and the reference kernel `kt worker --check-reference`
# needs.
if [ "${KT_PACK_DB:-1}" != 0 ]; then
    if ./tune --target sm_90a --db "$DB" --quiet; then
        echo "pack.sh: $DB: sm_90a kernels built"
    else
        echo "pack.sh: ./tune --target sm_90a --db $DB failed (no nvcc?): the GPU machine will build them" >&2
    fi
fi

# gemm_check's input: the ok sm_90a dense GEMM kernels as cubins plus a manifest.
# By default the device database's: the kernels the sweep will choose among, as built above.
EXPORT_DB=${KT_EXPORT_DB:-}
if [ -z "$EXPORT_DB" ]; then
    if [ -f "$DB" ]; then EXPORT_DB=$DB; else EXPORT_DB=out/test/dense.ktdb; fi
fi
if [ -f "$EXPORT_DB" ] && command -v sqlite3 > /dev/null; then
    rm -rf out/device/export
    sh tests/device/export_gemm.sh "$EXPORT_DB" sm_90a out/device/export
else
    echo "pack.sh: no $EXPORT_DB (or no sqlite3): out/device/export not refreshed; run_all's check step needs it" >&2
fi

# luajit and the libraries the Ubuntu machine lacks. glibc's own libraries, libgcc_s and
# libstdc++ are part of every Ubuntu and must stay the machine's own (an older copy first on
# LD_LIBRARY_PATH would be loaded by every program run under it); libsqlite3.so.0 is there.
LUAJIT=$(command -v luajit || true)
if [ -z "$LUAJIT" ]; then
    echo "pack.sh: luajit not found here (Debian package luajit; make deps)" >&2
    exit 1
fi
cp -L "$LUAJIT" out/device/bin/luajit
chmod 755 out/device/bin/luajit
rm -f out/device/lib/*
for bin in out/device/bin/luajit out/bin/kt out/lib/libkt.so out/bin/bench_gemm out/lib/libktrt.so; do
    ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r soname path; do
    case "$soname" in
        libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libgcc_s.so.*|libstdc++.so.*|libsqlite3.so.*) ;;
        *) cp -L "$path" "out/device/lib/$soname"
           echo "pack.sh: out/device/lib/$soname <- $(readlink -f "$path")" ;;
    esac
done

# Sizes: the device tool carries at most 64 MiB, the working tree (tracked and untracked files
# git does not ignore) and the carried folders together.
carried=$(du -sbc out/bin out/lib out/device | tail -n 1 | cut -f1)
tree=$(git ls-files -z -co --exclude-standard | xargs -0 du -bc 2>/dev/null | awk '$2 == "total" {t += $1} END {print t + 0}')
total=$((carried + tree))
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
du -sh out/bin out/lib out/device
echo "pack.sh: carried folders $(mib "$carried") + working tree $(mib "$tree") = $(mib "$total") of 64 MiB"
if [ "$total" -gt $((60 * 1048576)) ]; then
    echo "pack.sh: over 60 MiB: too close to the device tool's 64 MiB limit (clean out/device?)" >&2
    exit 1
fi
echo "pack.sh: carry out/bin out/lib out/device; run: sh tests/device/run_all.sh"
