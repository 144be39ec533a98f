#!/bin/sh
# test_resources_vs_tools.sh: hold ktune's ELF readers against independent tools.
#
#   sh tests/unit/test_resources_vs_tools.sh [FILE...]      (default: every fixture in tests/data)
#
# For every code object it builds tests/unit/elf_dump.c (which prints our readers' view: name vgpr
# sgpr agpr lds scratch vgpr_spills sgpr_spills wave max_wg per kernel) and compares each field
# with what another tool says about the same kernel:
#
#   AMDGPU (e_machine 224)  llvm-readelf-19 --notes (LLVM's own msgpack decoder, printed as YAML):
#                           every field, absent optional keys counted as 0.
#   CUDA (e_machine 190)    ptxas -v, from the first of:
#                             FILE minus .cubin plus .ptxas.txt   a saved `-Xptxas -v` report
#                             FILE minus .cubin plus .cu          compiled here with nvcc
#                                                                 -cubin -arch=sm_<N>[a] -Xptxas -v
#                                                                 $KT_NVCC_FLAGS (default -O3); only
#                                                                 meaningful with the compiler and
#                                                                 flags that built FILE
#                           compared: registers, smem, stack (max of frame and cumulative), spill
#                           stores + loads; wave 32; sgpr, agpr, sgpr_spills 0. max_wg is not in
#                           ptxas -v and is not compared.
#                           cuobjdump -res-usage FILE, when cuobjdump is installed: REG and SHARED.
#                           (No cuobjdump here: that path has only run against a stand-in
#                           printing its " Function k:" / "  REG:n STACK:n SHARED:n ..." format.)
#
# A file with no reference available is reported as "skip"; the test fails if any comparison
# fails or if no file at all could be checked. Knobs: CC, LLVM_READELF, NVCC, CUOBJDUMP,
# KT_NVCC_FLAGS, KT_NVCC_ARCH (overrides sm_<N> for sources; default sm_90a for SM 90).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kt_res.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
CC=${CC:-cc}
LLVM_READELF=${LLVM_READELF:-llvm-readelf-19}

find_nvcc() {
    [ -n "${NVCC:-}" ] && { echo "$NVCC"; return; }
    command -v nvcc 2>/dev/null && return
    [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ] && { echo "$CUDA_HOME/bin/nvcc"; return; }
    [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc
}
find_cuobjdump() {
    [ -n "${CUOBJDUMP:-}" ] && { echo "$CUOBJDUMP"; return; }
    command -v cuobjdump 2>/dev/null && return
    [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/cuobjdump" ] && { echo "$CUDA_HOME/bin/cuobjdump"; return; }
    [ -x /usr/local/cuda/bin/cuobjdump ] && echo /usr/local/cuda/bin/cuobjdump
}
NVCC_BIN=$(find_nvcc)
CUOBJDUMP_BIN=$(find_cuobjdump)

DUMP=$TMP/elf_dump
"$CC" -std=c11 -Wall -Wextra -I"$ROOT" -I"$ROOT/build" -o "$DUMP" "$ROOT/tests/unit/elf_dump.c" \
    "$ROOT"/build/elf*.c "$ROOT/build/msgpack_read.c" || { echo "FAIL: cannot build elf_dump"; exit 1; }

if [ $# -eq 0 ]; then
    set -- "$ROOT"/tests/data/*.co "$ROOT"/tests/data/*.cubin
fi

# llvm-readelf --notes YAML -> "name vgpr sgpr agpr lds scratch vspill sspill wave maxwg".
# Kernel-level keys sit at indent 4 (the first one on the "  - " line); .args entries are deeper.
amd_reference() {
    "$LLVM_READELF" --notes "$1" | awk '
        function flush() {
            if (inkern && name != "")
                print name, v[".vgpr_count"], v[".sgpr_count"], z(".agpr_count"),
                      v[".group_segment_fixed_size"], v[".private_segment_fixed_size"],
                      z(".vgpr_spill_count"), z(".sgpr_spill_count"), v[".wavefront_size"],
                      v[".max_flat_workgroup_size"]
            split("", v); name = ""
        }
        function z(k) { return (k in v) ? v[k] : 0 }
        /^amdhsa\./ { flush(); inkern = ($1 == "amdhsa.kernels:"); next }
        !inkern { next }
        /^  - / { flush(); sub(/^  - /, "    ") }
        /^    \.[a-z_]+:/ {
            key = $1; sub(/:$/, "", key); val = $2
            gsub(/^[\047"]|[\047"]$/, "", val)
            if (key == ".name") name = val; else v[key] = val
        }
        END { flush() }'
}

# ptxas -v report on stdin -> expected lines ("-" where ptxas says nothing). Only entry
# functions count; the frame line of a called device function is not the kernel's.
ptxas_reference() {
    awk '
        function flush() {
            if (name != "")
                print name, regs, 0, 0, smem, (cum > frame ? cum : frame), st + ld, 0, 32, "-"
            name = ""
        }
        function lead(s,    q) { split(s, q, " "); return q[1] + 0 }
        /Compiling entry function/ {
            flush(); name = $0; sub(/^.*entry function \047/, "", name); sub(/\047.*$/, "", name)
            regs = smem = frame = cum = st = ld = props = 0; next
        }
        /Function properties for / { fp = $0; sub(/^.*Function properties for /, "", fp); props = (fp == name); next }
        /bytes stack frame/ && props {
            n = split($0, part, /, */)
            for (i = 1; i <= n; i++) {
                if (part[i] ~ /stack frame/) frame = lead(part[i])
                if (part[i] ~ /spill stores/) st = lead(part[i])
                if (part[i] ~ /spill loads/) ld = lead(part[i])
            }
            next
        }
        /Used [0-9]+ registers/ && name != "" {
            props = 0
            if (match($0, /Used [0-9]+ registers/)) regs = substr($0, RSTART + 5, RLENGTH - 15) + 0
            if (match($0, /[0-9]+ bytes smem/)) smem = substr($0, RSTART, RLENGTH - 11) + 0
            if (match($0, /[0-9]+ bytes cumulative stack size/)) cum = substr($0, RSTART, RLENGTH - 28) + 0
        }
        END { flush() }'
}

# cuobjdump -res-usage -> expected lines with only vgpr (REG) and lds (SHARED) known.
cuobjdump_reference() {
    "$CUOBJDUMP_BIN" -res-usage "$1" | awk '
        /Function [^ ]+:/ { name = $0; sub(/^.*Function /, "", name); sub(/:[^:]*$/, "", name); next }
        /REG:[0-9]+/ && name != "" {
            reg = sh = "-"
            n = split($0, w, /[ \t]+/)
            for (i = 1; i <= n; i++) {
                if (w[i] ~ /^REG:/) { reg = w[i]; sub(/^REG:/, "", reg) }
                if (w[i] ~ /^SHARED:/) { sh = w[i]; sub(/^SHARED:/, "", sh) }
            }
            print name, reg, "-", "-", sh, "-", "-", "-", "-", "-"; name = ""
        }'
}

# compare OURS REF TOOL FILE: every kernel on both sides, every field REF knows.
compare() {
    awk -v tool="$3" -v file="$4" '
        BEGIN { split("vgpr sgpr agpr lds scratch vgpr_spills sgpr_spills wave max_wg", field, " ") }
        NR == FNR { ref[$1] = $0; next }
        {
            seen[$1] = 1
            if (!($1 in ref)) { printf "FAIL %s: kernel %s is not in %s output\n", file, $1, tool; bad = 1; next }
            split(ref[$1], r, " ")
            for (i = 2; i <= 10; i++)
                if (r[i] != "-" && r[i] != $i) {
                    printf "FAIL %s: kernel %s %s: ours %s, %s %s\n", file, $1, field[i - 1], $i, tool, r[i]
                    bad = 1
                }
        }
        END {
            for (k in ref) if (!(k in seen)) { printf "FAIL %s: %s lists kernel %s, we do not\n", file, tool, k; bad = 1 }
            exit bad
        }' "$2" "$1"
}

checked=0 skipped=0 failed=0
check_against() {   # check_against FILE TOOL REFFILE
    n=$(wc -l < "$3")
    if [ "$n" -eq 0 ]; then
        echo "FAIL $1: $2 reported no kernels"; failed=$((failed + 1)); return
    fi
    if compare "$TMP/ours" "$3" "$2" "$1"; then
        echo "ok   $1: $(wc -l < "$TMP/ours") kernels agree with $2"
    else
        failed=$((failed + 1))
    fi
    did=1
}

for f in "$@"; do
    if ! head=$("$DUMP" -t "$f" 2>"$TMP/err"); then
        echo "FAIL $f: $(cat "$TMP/err")"; failed=$((failed + 1)); continue
    fi
    if ! "$DUMP" "$f" > "$TMP/ours" 2>"$TMP/err"; then
        echo "FAIL $f: $(cat "$TMP/err")"; failed=$((failed + 1)); continue
    fi
    did=0
    case $head in
    amdgpu*)
        if amd_reference "$f" > "$TMP/ref"; then check_against "$f" llvm-readelf "$TMP/ref"
        else echo "FAIL $f: $LLVM_READELF --notes failed"; failed=$((failed + 1)); continue; fi
        ;;
    cuda*)
        stem=${f%.cubin}
        if [ -f "$stem.ptxas.txt" ]; then
            ptxas_reference < "$stem.ptxas.txt" > "$TMP/ref"
            check_against "$f" "ptxas -v (saved $stem.ptxas.txt)" "$TMP/ref"
        elif [ -f "$stem.cu" ] && [ -n "$NVCC_BIN" ]; then
            sm=${head#cuda sm_}
            arch=${KT_NVCC_ARCH:-sm_$sm}
            [ -z "${KT_NVCC_ARCH:-}" ] && [ "$sm" = 90 ] && arch=sm_90a
            if "$NVCC_BIN" -cubin -arch="$arch" -Xptxas -v ${KT_NVCC_FLAGS:--O3} "$stem.cu" \
                    -o "$TMP/re.cubin" 2> "$TMP/ptxas.txt"; then
                ptxas_reference < "$TMP/ptxas.txt" > "$TMP/ref"
                check_against "$f" "ptxas -v (nvcc $arch $stem.cu)" "$TMP/ref"
            else
                echo "FAIL $f: nvcc could not compile $stem.cu"; failed=$((failed + 1)); continue
            fi
        fi
        if [ -n "$CUOBJDUMP_BIN" ]; then
            if cuobjdump_reference "$f" > "$TMP/ref"; then check_against "$f" "cuobjdump -res-usage" "$TMP/ref"
            else echo "FAIL $f: cuobjdump -res-usage failed"; failed=$((failed + 1)); continue; fi
        fi
        ;;
    esac
    if [ "$did" = 1 ]; then checked=$((checked + 1))
    else echo "skip $f: no independent reference (no .ptxas.txt, no .cu with nvcc, no cuobjdump)"
        skipped=$((skipped + 1)); fi
done

echo "test_resources_vs_tools: $checked file(s) checked, $skipped skipped, $failed failure(s)"
[ "$failed" -eq 0 ] && [ "$checked" -gt 0 ]
