#!/bin/sh
# compile_templates.sh: compile a handful of dense GEMM instantiations, emitted exactly as `kt gen`
# emits them, for every target, and check what came out. No GPU needed. Run from anywhere:
#   sh tests/compile_templates.sh          (KEEP=1 keeps the temporary directory)
#
# 1. the fragment-layout emulation (tests/unit/test_fragment_layouts.cpp) builds and passes;
# 2. templates/gemm/dense.lua admits >= 100 variants on each of gfx1201, gfx1100, gfx942, sm_90a
#    (counted with LuaJIT against the rows of build/target.c) and each sample below on the targets
#    it names; the counts are printed;
# 3. each sample compiles: gfx1201/gfx1100/gfx942 with clang-19 (-nogpuinc, our preludes only),
#    gfx90a with hipcc (ROCm headers force-included) then unbundled, sm_90a with nvcc -cubin;
#    AMD objects must be loadable code objects (ET_DYN, EM_AMDGPU, the right gfx in e_flags) that
#    list the expected kernels, with no scratch and no spills; cubins must list the kernels and
#    ptxas must report 0 spill bytes and no stack frame;
# 4. the matrix instruction sits inside a loop (a backward branch spans it) on every AMD object;
#    on sm_90a the SASS has HMMA (cuobjdump), or, where cuobjdump is missing, the PTX has mma.sync.
# One line per check; exits non-zero on any failure. A missing hipcc or nvcc is a skip, not a
# failure (as in build/deps.sh); a missing clang-19 is a failure.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kt-compile.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT INT TERM

CLANG=${CLANG:-clang-19}
CXX=${CXX:-g++}
READELF=${READELF:-llvm-readelf-19}
OBJDUMP=${OBJDUMP:-llvm-objdump-19}
LUAJIT=${LUAJIT:-luajit}
HIPCC=${HIPCC:-$(command -v hipcc 2>/dev/null || true)}
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || true)}
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump 2>/dev/null || true)}
[ -z "$CUOBJDUMP" ] && [ -n "$NVCC" ] && [ -x "$(dirname "$NVCC")/cuobjdump" ] && CUOBJDUMP=$(dirname "$NVCC")/cuobjdump
# The unbundler must understand hipcc's bundles: prefer the one of hipcc's own LLVM (Debian: 15).
BUNDLER=${BUNDLER:-}
if [ -z "$BUNDLER" ]; then
    for b in /usr/lib/llvm-15/bin/clang-offload-bundler /opt/rocm/llvm/bin/clang-offload-bundler \
             /usr/lib/llvm-19/bin/clang-offload-bundler; do
        [ -x "$b" ] && { BUNDLER=$b; break; }
    done
fi

passes=0 fails=0 skips=0
pass() { passes=$((passes + 1)); echo "ok    $*"; }
fail() { fails=$((fails + 1)); echo "FAIL  $*"; }
skip() { skips=$((skips + 1)); echo "skip  $*"; }

# Samples: dtype BM BN BK WM WN SK, then the targets the recipe must admit it on. Smallest tile,
# the deepest split-K, both dtypes, 1/2/4/8 waves, and the largest tile each target admits.
SAMPLES="
bf16 16 32 32 1 1 1 : gfx1201 gfx1100 gfx942 gfx90a sm_90a
fp16 16 128 64 1 2 8 : gfx1201 gfx1100 gfx942 gfx90a sm_90a
bf16 32 64 32 1 2 4 : gfx1201 gfx1100 gfx942 gfx90a sm_90a
fp16 64 64 64 2 2 2 : gfx1201 gfx1100 gfx942 gfx90a sm_90a
bf16 128 64 32 2 2 1 : gfx1201 gfx1100 gfx942 gfx90a sm_90a
fp16 128 128 32 2 4 1 : gfx1201 gfx1100 sm_90a
bf16 128 128 64 2 2 1 : gfx942 gfx90a
"

# ---- 1. fragment layouts on the CPU ----
mkdir -p "$tmp/bin"
if "$CXX" -std=c++17 -O1 -I"$root/templates" -I"$root/tests/unit" "$root/tests/unit/test_fragment_layouts.cpp" \
        -o "$tmp/bin/test_fragment_layouts" >"$tmp/layout.log" 2>&1 &&
   "$tmp/bin/test_fragment_layouts" >>"$tmp/layout.log" 2>&1; then
    pass "layouts  $(tail -n 1 "$tmp/layout.log")"
else
    fail "layouts  (log follows)"; cat "$tmp/layout.log"
fi

# ---- 2. the recipe: variant counts per target, and which samples it admits ----
# Target descriptors as the generator passes them, read from the rows of build/target.c.
awk -F, '/^ *\{"/ {
    for (i = 1; i <= NF; i++) { gsub(/[{}" ]/, "", $i) }
    printf "{ name=\"%s\", vendor=\"%s\", mma=\"%s\", wave_size=%s, lds_per_workgroup=%s, regs_per_simd=%s, max_waves_per_simd=%s, max_regs_per_thread=%s },\n",
        $1, ($2 == "KT_VENDOR_AMD" ? "amd" : "nvidia"), $4, $5, $6, $9, $11, $12 }' \
    "$root/build/target.c" > "$tmp/targets.lua"
cat > "$tmp/recipe.lua" <<'EOF'
-- usage: luajit recipe.lua dense.lua targets.lua  (samples on stdin: "dtype BM BN BK WM WN SK")
local recipe = dofile(arg[1])
local targets = dofile(arg[2])
for _, t in ipairs(targets) do
  local idx, total, ok, by_sk, by_dtype = {}, 0, 0, {}, {}
  for i = 1, #recipe.axes do idx[i] = 1 end
  repeat
    local p = {}
    for i, ax in ipairs(recipe.axes) do p[ax[1]] = ax[2][idx[i]] end
    total = total + 1
    if recipe.constraint(p, t) then
      ok = ok + 1
      by_sk[p.SK] = (by_sk[p.SK] or 0) + 1
      by_dtype[p.dtype] = (by_dtype[p.dtype] or 0) + 1
    end
    local a = #recipe.axes
    while a >= 1 do
      idx[a] = idx[a] + 1
      if idx[a] <= #recipe.axes[a][2] then break end
      idx[a] = 1; a = a - 1
    end
  until a < 1
  local sk = {}
  for _, s in ipairs({ 1, 2, 4, 8 }) do sk[#sk + 1] = "sk" .. s .. "=" .. (by_sk[s] or 0) end
  print(string.format("count %s %d %d bf16=%d fp16=%d %s", t.name, ok, total,
    by_dtype.bf16 or 0, by_dtype.fp16 or 0, table.concat(sk, " ")))
end
for line in io.lines() do
  local d, bm, bn, bk, wm, wn, sk = line:match("^(%w+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$")
  if d then
    local p = { dtype = d, BM = tonumber(bm), BN = tonumber(bn), BK = tonumber(bk),
                WM = tonumber(wm), WN = tonumber(wn), SK = tonumber(sk) }
    for _, t in ipairs(targets) do
      local good, why = recipe.constraint(p, t)
      print(string.format("admit %s %s %s", t.name, line, good and "yes" or ("no:" .. tostring(why))))
    end
  end
end
EOF
echo "return {" > "$tmp/targets_table.lua"; cat "$tmp/targets.lua" >> "$tmp/targets_table.lua"; echo "}" >> "$tmp/targets_table.lua"
echo "$SAMPLES" | sed -n 's/ *:.*//p' | "$LUAJIT" "$tmp/recipe.lua" "$root/templates/gemm/dense.lua" \
    "$tmp/targets_table.lua" > "$tmp/recipe.out" 2>&1 || { fail "recipe   luajit failed:"; cat "$tmp/recipe.out"; }
[ -s "$tmp/targets.lua" ] || fail "recipe   no target rows parsed from build/target.c"
while read -r tag name ok total rest; do
    [ "$tag" = count ] || continue
    case $name in
        gfx90a) pass "recipe   $name: $ok of $total variants ($rest)" ;;
        *) if [ "$ok" -ge 100 ]; then pass "recipe   $name: $ok of $total variants ($rest)"
           else fail "recipe   $name: only $ok variants (want >= 100)"; fi ;;
    esac
done < "$tmp/recipe.out"
admitted() {   # admitted TARGET "dtype BM BN BK WM WN SK" -> yes | no:reason
    grep "^admit $1 $2 " "$tmp/recipe.out" | sed 's/.* //'
}

# ---- 3 + 4. compile and inspect ----
prelude_of() {
    case $1 in gfx1201) echo arch/gfx12.h ;; gfx1100) echo arch/gfx11.h ;;
               gfx942|gfx90a) echo arch/cdna.h ;; sm_90a) echo arch/sm90.h ;; esac
}

emit() {   # emit TARGET NAME dtype BM BN BK WM WN SK > source, as gen/recipe.c writes it
    printf '/* generated by kt gen from templates/gemm/dense.lua for %s; do not edit */\n' "$1"
    printf '#include "%s"\n#define KT_KERNEL_NAME %s\n' "$(prelude_of "$1")" "$2"
    printf '#define KT_DTYPE %s\n#define KT_BM %s\n#define KT_BN %s\n#define KT_BK %s\n' "$3" "$4" "$5" "$6"
    printf '#define KT_WM %s\n#define KT_WN %s\n#define KT_SK %s\n#include "gemm/dense.hip"\n' "$7" "$8" "$9"
}

# A backward branch whose span holds a matrix instruction: the K loop issues it every iteration.
mma_in_loop() {   # mma_in_loop OBJ MCPU REGEX -> prints the count of such instructions in loops
    "$OBJDUMP" -d --symbolize-operands --mcpu="$2" "$1" 2>/dev/null | awk -v re="$3" '
        /^[0-9a-f]+ <L[0-9]+>:/ { lab = $2; sub(/^</, "", lab); sub(/>:$/, "", lab); def[lab] = NR; next }
        $1 ~ re { n++; at[n] = NR; next }
        $1 ~ /^s_(cbranch_[a-z0-9]+|branch)$/ && ($2 in def) {
            for (i = 1; i <= n; i++) if (at[i] > def[$2] && at[i] < NR) inloop[i] = 1 }
        END { c = 0; for (i in inloop) c++; print c }'
}

check_amd() {   # check_amd TARGET OBJ KERNELS... -> "" or the problem
    t=$1 obj=$2; shift 2
    hdr=$("$READELF" -h "$obj" 2>&1)
    echo "$hdr" | grep -q "Type: *DYN" || { echo "not ET_DYN"; return; }
    echo "$hdr" | grep -q "Flags:.*$t" || { echo "e_flags is not $t"; return; }
    notes=$("$READELF" --notes "$obj" 2>&1)
    for k in "$@"; do
        echo "$notes" | grep -q "^ *\.name: *$k\$" || { echo "kernel $k missing from amdhsa.kernels"; return; }
    done
    case $t in gfx1201|gfx1100) wave=32 ;; *) wave=64 ;; esac   # the preludes' KT_WAVE
    echo "$notes" | grep -E "^ *\.wavefront_size:" | grep -vq ": *$wave\$" && { echo "not wave$wave"; return; }
    echo "$notes" | grep -E "^ *\.private_segment_fixed_size:" | grep -vq ": *0\$" && { echo "scratch in use"; return; }
    echo "$notes" | grep -E "^ *\.(vgpr|sgpr)_spill_count:" | grep -vq ": *0\$" && { echo "spills"; return; }
    echo ""
}

amd_summary() {   # vgpr/agpr/lds of the main kernel (the first one listed with the most VGPRs)
    "$READELF" --notes "$1" | awk '/\.agpr_count:/ {a = $NF} /\.group_segment_fixed_size:/ {l = $NF}
        /\.vgpr_count:/ { if ($NF + 0 > v + 0) { v = $NF; aa = a; ll = l } }
        END { printf "vgpr=%s%s lds=%s", v, (aa != "" ? " agpr=" aa : ""), ll }'
}

compile_one() {   # compile_one TARGET dtype BM BN BK WM WN SK
    t=$1; shift
    name=kt_gemm_dense_$1_bm$2_bn$3_bk$4_wm$5_wn$6_sk$7
    kernels=$name
    [ "$7" -gt 1 ] && kernels="$name ${name}_reduce"
    src=$tmp/$t.$name.hip
    emit "$t" "$name" "$@" > "$src"
    log=$tmp/$t.$name.log
    case $t in
    gfx1201|gfx1100|gfx942)
        obj=$tmp/$t.$name.co
        if ! "$CLANG" -x hip --offload-arch="$t" --offload-device-only --no-gpu-bundle-output -nogpulib \
                -nogpuinc -O3 -std=c++17 -I"$root/templates" "$src" -o "$obj" >"$log" 2>&1; then
            fail "$t $name: compile"; cat "$log"; return
        fi ;;
    gfx90a)
        [ -n "$HIPCC" ] || { skip "$t $name: no hipcc"; return; }
        [ -n "$BUNDLER" ] || { skip "$t $name: no clang-offload-bundler"; return; }
        obj=$tmp/$t.$name.co
        if ! "$HIPCC" --genco --offload-arch=gfx90a -O3 -std=c++17 -I"$root/templates" "$src" \
                -o "$tmp/$t.$name.bundle" >"$log" 2>&1 ||
           ! "$BUNDLER" --type=o --unbundle --targets=hipv4-amdgcn-amd-amdhsa--gfx90a \
                --input="$tmp/$t.$name.bundle" --output="$obj" >>"$log" 2>&1; then
            fail "$t $name: compile/unbundle"; cat "$log"; return
        fi ;;
    sm_90a)
        [ -n "$NVCC" ] || { skip "$t $name: no nvcc"; return; }
        obj=$tmp/$t.$name.cubin
        if ! "$NVCC" -cubin -gencode arch=compute_90a,code=sm_90a -O3 -x cu -std=c++17 -I"$root/templates" \
                -Xptxas -v "$src" -o "$obj" >"$log" 2>&1; then
            fail "$t $name: compile"; cat "$log"; return
        fi
        syms=$("$READELF" -s "$obj" 2>&1)
        for k in $kernels; do
            echo "$syms" | grep -q " $k\$" || { fail "$t $name: kernel $k not in the cubin"; return; }
        done
        if grep -E "bytes spill (stores|loads)" "$log" | grep -vq " 0 bytes spill stores, 0 bytes spill loads"; then
            fail "$t $name: ptxas reports spills"; grep -E "spill|stack" "$log"; return
        fi
        if grep -E "bytes stack frame" "$log" | grep -vq "^ *0 bytes stack frame"; then
            fail "$t $name: stack frame in use"; grep -E "stack" "$log"; return
        fi
        regs=$(grep -o "Used [0-9]* registers" "$log" | awk '{ if ($2 > m) m = $2 } END { print m }')
        smem=$(grep -o "[0-9]* bytes smem" "$log" | head -n 1 | awk '{ print $1 }')
        if [ -n "$CUOBJDUMP" ]; then
            n=$("$CUOBJDUMP" -sass "$obj" 2>/dev/null | grep -c "HMMA")
            isa="HMMA=$n (sass)"
        else
            "$NVCC" -ptx -gencode arch=compute_90a,code=sm_90a -O3 -x cu -std=c++17 -I"$root/templates" \
                "$src" -o "$tmp/$t.$name.ptx" >/dev/null 2>&1
            n=$(grep -c "mma.sync.aligned.m16n8k16" "$tmp/$t.$name.ptx" 2>/dev/null)
            isa="mma.sync=$n (ptx; no cuobjdump)"
        fi
        [ "${n:-0}" -gt 0 ] || { fail "$t $name: no matrix instructions ($isa)"; return; }
        pass "$t $name: regs=$regs smem=${smem:-0} spill=0 $isa"
        return ;;
    esac
    problem=$(check_amd "$t" "$obj" $kernels)
    [ -z "$problem" ] || { fail "$t $name: $problem"; return; }
    case $t in gfx1201|gfx1100) re='^v_wmma_' ;; *) re='^v_mfma_' ;; esac
    n=$(mma_in_loop "$obj" "$t" "$re")
    [ "${n:-0}" -gt 0 ] || { fail "$t $name: no ${re#^} inside a loop"; return; }
    pass "$t $name: $(amd_summary "$obj") scratch=0 spill=0 ${re#^}*=$n in loop"
}

[ -n "$HIPCC" ] || echo "note: hipcc not found; gfx90a samples are skipped"
[ -n "$NVCC" ] || echo "note: nvcc not found; sm_90a samples are skipped"
echo "$SAMPLES" | while IFS=: read -r params targets; do
    [ -n "$params" ] || continue
    params=$(echo "$params" | sed 's/ *$//')
    for t in $targets; do
        a=$(admitted "$t" "$params")
        if [ "$a" != yes ]; then
            echo "FAIL  $t $params: the recipe does not admit this sample (${a#no:})"
            continue
        fi
        compile_one "$t" $params
    done
done > "$tmp/compile.out"
cat "$tmp/compile.out"
passes=$((passes + $(grep -c '^ok ' "$tmp/compile.out")))
fails=$((fails + $(grep -c '^FAIL ' "$tmp/compile.out")))
skips=$((skips + $(grep -c '^skip ' "$tmp/compile.out")))

echo "$passes passed, $fails failed, $skips skipped"
[ "$fails" -eq 0 ]
