#!/bin/sh
# make.sh: regenerate the disassembly fixtures of tests/unit/test_isa_stats.c from the kernels
# beside it, then count them with awk, independently of build/isa_stats.c, so the test's expected
# numbers can be re-derived after a toolchain change.
#   sh tests/data/isa/make.sh          regenerate every fixture whose tools are found, then count
#   sh tests/data/isa/make.sh count    only count the committed fixtures
# Tools: CLANG (clang-19) and OBJDUMP (llvm-objdump-19) for gfx1201/gfx942; NVCC and CUOBJDUMP
# (PATH, then /usr/local/cuda/bin) for sm_90a. Alignment padding (runs of s_code_end, s_nop 0,
# NOP) is cut to two per run so each file stays a few KB. gfx1201.co is kept: the test runs the
# real llvm-objdump on it when that is installed.
set -eu
cd "$(dirname "$0")"
CLANG=${CLANG:-clang-19}
OBJDUMP=${OBJDUMP:-llvm-objdump-19}
CUDA_BIN=${CUDA_HOME:-/usr/local/cuda}/bin
NVCC=${NVCC:-$(command -v nvcc || echo "$CUDA_BIN/nvcc")}
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo "$CUDA_BIN/cuobjdump")}

# Loops as read off the listings by hand (hex offsets of head and back-edge, as absolute
# addresses for AMD and function offsets for SASS). Re-read them after regenerating.
LOOPS_GFX1201="16c8 175c"
LOOPS_GFX942="1958 19c0 1a10 1b9c"
LOOPS_SM90A="0290 03e0 04c0 0620"

trim_amd() {
    awk '/^\t(s_code_end|s_nop 0) / { if (++run > 2) next; print; next } { run = 0; print }'
}

# SASS prints each instruction on one line and the rest of its encoding on the next.
trim_sass() {
    awk '/\/\*[0-9a-f]+\*\/ +NOP *;/ { if (++run > 2) { skip = 1; next } print; next }
         skip && /^[ \t]+\/\* 0x/ { skip = 0; next }
         /\/\*[0-9a-f]+\*\// { run = 0 }
         { skip = 0; print }'
}

amd() { # target
    "$CLANG" -x hip --offload-arch="$1" --offload-device-only --no-gpu-bundle-output -nogpulib \
        -nogpuinc -O3 "$1.hip" -o "$1.co"
    "$OBJDUMP" -d --mcpu="$1" "$1.co" | trim_amd > "$1.txt"
    [ "$1" = gfx1201 ] || rm -f "$1.co"
    echo "make.sh: wrote $1.txt"
}

sass() {
    "$NVCC" -cubin -arch=sm_90a -O3 sm_90a.cu -o sm_90a.cubin
    "$CUOBJDUMP" -sass sm_90a.cubin | trim_sass > sm_90a.txt
    rm -f sm_90a.cubin
    echo "make.sh: wrote sm_90a.txt"
}

# count_amd FILE KERNEL [LO HI]: the kernel up to its last s_endpgm, or instructions at LO..HI.
count_amd() {
    awk -v fn="$2" -v lo="${3:-}" -v hi="${4:-}" '
    function hex(s,   i, c, v) { v = 0; s = tolower(s)
        for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); if (!c) break; v = v * 16 + c - 1 }
        return v }
    /^[0-9a-f]+ <.*>:$/ { infn = ($2 == "<" fn ">:"); next }
    infn && /\/\/ [0-9A-F]+:/ { n++; m[n] = $1; s = $0; sub(/.*\/\/ /, "", s); a[n] = hex(s) }
    END {
        last = n
        if (lo == "") while (last > 0 && m[last] != "s_endpgm") last--
        for (i = 1; i <= last; i++) {
            if (lo != "" && (a[i] < hex(lo) || a[i] > hex(hi))) continue
            x = m[i]; t++
            if (x ~ /^v_(wmma|swmmac|mfma|smfmac)/) mma++
            else if (x ~ /^ds_(read|load)/) dr++
            else if (x ~ /^ds_(write|store)/) dw++
            else if (x ~ /^(global|buffer|flat)_load/) gl++
            else if (x ~ /^(global|buffer|flat)_store/) gs++
            else if (x ~ /^s_(load|buffer_load)/) sl++
            else if (x ~ /^scratch_(load|store)/) sc++
            else if (x == "s_barrier" || x == "s_barrier_wait") bar++
            else if (x ~ /^v_/) va++
            else if (x ~ /^s_/) sa++
        }
        printf "mma=%d lds_read=%d lds_write=%d global_load=%d global_store=%d scalar_load=%d scratch=%d barrier=%d valu=%d salu=%d total=%d\n",
               mma, dr, dw, gl, gs, sl, sc, bar, va, sa, t
    }' "$1"
}

# count_sass FILE KERNEL [LO HI]: the kernel up to the branch-to-self after its last EXIT.
count_sass() {
    awk -v fn="$2" -v lo="${3:-}" -v hi="${4:-}" '
    function hex(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
        for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); if (!c) break; v = v * 16 + c - 1 }
        return v }
    /Function : / { infn = ($3 == fn); next }
    /^[ \t]*\.\.\.\.\./ { infn = 0 }
    infn && /^[ \t]*\/\*[0-9a-f]+\*\// {
        s = $1; gsub(/[^0-9a-f]/, "", s); addr = hex(s)
        f = 2; if (substr($f, 1, 1) == "@") f++
        op = $f; sub(/[.;].*/, "", op)
        if (op == "BRA" && hex($(f + 1)) == addr) { stop = 1 }
        if (stop) next
        n++; m[n] = op; a[n] = addr
    }
    END {
        for (i = 1; i <= n; i++) {
            if (lo != "" && (a[i] < hex(lo) || a[i] > hex(hi))) continue
            x = m[i]; t++
            if (x ~ /MMA/) mma++
            else if (x == "LDS" || x == "LDSM") dr++
            else if (x == "STS" || x == "STSM") dw++
            else if (x == "LDG" || x == "LDGSTS" || x == "UTMALDG" || x == "UBLKCP") gl++
            else if (x == "STG" || x == "UTMASTG") gs++
            else if (x == "LDC" || x == "ULDC") sl++
            else if (x == "LDL" || x == "STL") sc++
            else if (x == "BAR") bar++
            else if (x ~ /^U/) sa++
            else va++
        }
        printf "mma=%d lds_read=%d lds_write=%d global_load=%d global_store=%d scalar_load=%d scratch=%d barrier=%d valu=%d salu=%d total=%d\n",
               mma, dr, dw, gl, gs, sl, sc, bar, va, sa, t
    }' "$1"
}

count_loops() { # counter file kernel "lo hi lo hi ..."
    c=$1 f=$2 k=$3
    set -- $4
    while [ $# -ge 2 ]; do printf '  loop %s..%s: ' "$1" "$2"; $c "$f" "$k" "$1" "$2"; shift 2; done
}

if [ "${1:-}" != count ]; then
    if command -v "$CLANG" >/dev/null && command -v "$OBJDUMP" >/dev/null; then amd gfx1201; amd gfx942
    else echo "make.sh: $CLANG or $OBJDUMP not found, AMD fixtures kept"; fi
    if [ -x "$NVCC" ] && [ -x "$CUOBJDUMP" ]; then sass
    else echo "make.sh: nvcc or cuobjdump not found, sm_90a.txt kept"; fi
fi

printf 'gfx1201.txt k: '; count_amd gfx1201.txt k
count_loops count_amd gfx1201.txt k "$LOOPS_GFX1201"
printf 'gfx942.txt kloops: '; count_amd gfx942.txt kloops
count_loops count_amd gfx942.txt kloops "$LOOPS_GFX942"
printf 'gfx942.txt kplain: '; count_amd gfx942.txt kplain
printf 'sm_90a.txt kloops: '; count_sass sm_90a.txt kloops
count_loops count_sass sm_90a.txt kloops "$LOOPS_SM90A"
printf 'sm_90a.txt kplain: '; count_sass sm_90a.txt kplain
