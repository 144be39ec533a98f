#!/bin/sh
# run_compile.sh: the build pipeline end to end on every target, on a machine without a GPU.
#  - kt gen of the dense GEMM recipe gives >= 100 ok kernels on gfx1201, gfx1100, gfx942, sm_90a
#  - gfx90a goes through Debian's hipcc (the real HIP headers) and is unbundled (a sample of 48)
#  - resources in the DB equal llvm-readelf-19 --notes / nvcc -Xptxas -v for >= 10 random kernels per target
#  - a second run compiles nothing and takes < 2 s; a changed flag recompiles
#  - bad input to kt gen is refused with a message naming the fault
#  - a recipe that stops admitting variants retires their stored kernels; admitting them again
#    restores them without compiling
#  - swapab's stream-K variants compile without spills on gfx1201 and sm_90a (PTX: the grid size
#    read, the tile counters bumped, the slabs read coherently)
#  - the fused add + RMSNorm recipe builds every variant on every target (gfx90a: 48), no spills,
#    16-byte moves
#  - the paged decode attention recipe builds on every target (samples: gfx1201 a larger one, and
#    its head size 512 within 64 KiB of LDS), nothing failed, no ok kernel spilling
#  - attn_decode's float64 GPU reference builds for every dtype on every target, no spills
#  - decode's F8 form builds on gfx1201 with S in gfx12's fp8 WMMA
#  - the paged prefill attention recipe builds on every target (gfx1201 whole, a sample elsewhere),
#    nothing failed, no ok kernel spilling
#  - the fused GDN decode recipe builds on every target (gfx1201 and sm_90a whole), no spills
#  - with KT_COMPILE_ALL=1 (make test-compile-all): every recipe whole on every target
#  - the sm_90a-only wgmma recipes build there (dynamic shared memory counted, PTX has wgmma; the
#    warp-specialized one has mbarriers, no spills) and nothing, without error, on an AMD target
# Environment: KT_TEST_DIR (default out/test), KT_CACHE (default out/cache), KT_COMPILE_ALL.
set -u
cd "$(dirname "$0")/.."
KT=out/bin/kt
DIR=${KT_TEST_DIR:-out/test}
export KT_CACHE=${KT_CACHE:-out/cache}
export PATH="$PATH:/usr/local/cuda/bin"
DB=$DIR/dense.ktdb
RECIPE=templates/gemm/dense.lua
mkdir -p "$DIR"
rm -f "$DB" "$DB-wal" "$DB-shm"
checks=0; failed=0
check() {  # check NAME COMMAND...: run, print one line with its seconds, count
    name=$1; shift
    checks=$((checks + 1))
    t0=$(date +%s)
    if "$@" >"$DIR/check.out" 2>&1; then echo "  pass  $name  ($(( $(date +%s) - t0 )) s)"
    else failed=$((failed + 1)); echo "  FAIL  $name  ($(( $(date +%s) - t0 )) s)"; sed 's/^/        /' "$DIR/check.out" | tail -20; fi
}
q() { sqlite3 "$DB" "$1"; }
refuses_tune() {
    if ./tune --target gfx9999 --db "$DIR/bad.ktdb" > "$DIR/refuse.txt" 2>&1; then return 1; fi
    cat "$DIR/refuse.txt"; grep -q "unknown target 'gfx9999'" "$DIR/refuse.txt" && [ ! -e "$DIR/bad.ktdb" ]
}

# make test builds an evenly spaced sample (the same each run) of the attention recipes, whose
# whole spaces take hours on 2 cores; KT_COMPILE_ALL=1 (make test-compile-all) builds every
# variant of every recipe on every target, for a release or a new toolchain
ALL=${KT_COMPILE_ALL:-0}
# kt gen retires nothing under --sample: one past any space builds a narrowed copy whole
WHOLE="--sample 9999"
sample() { [ "$ALL" = 1 ] || echo "--sample $1"; }
subset() { if [ "$ALL" = 1 ]; then echo "$WHOLE"; else echo "--sample $1"; fi; }   # of a narrowed copy
# narrow SRC DST 'AXIS { VALUES }'...: a copy of a recipe (beside its template) with axes narrowed,
# built with --sample larger than its space: every variant it admits, nothing else retired
narrow() {
    src=$1; dst=$2; shift 2
    cp "$src" "$dst" || return 1
    for ax; do
        name=${ax%% *}; vals=${ax#* }
        sed -i "s/{ \"$name\", {[^}]*} }/{ \"$name\", $vals }/" "$dst"
        grep -qF "{ \"$name\", $vals }" "$dst" || { echo "narrow: no axis $name in $src"; return 1; }
    done
}

TARGETS="gfx1201 gfx1100 gfx942 gfx90a"
if command -v nvcc >/dev/null 2>&1; then TARGETS="$TARGETS sm_90a"
else echo "  note  nvcc not found: sm_90a is not built in this run"; fi

# gfx90a (Debian's hipcc, twice clang's time a kernel) builds a sample: it proves the hipcc path, the
# product's targets are the others
hip_sample() { [ "$1" = gfx90a ] && sample 48; }
for t in $TARGETS; do
    check "kt gen $t" sh -c "$KT gen --recipe $RECIPE --target $t --db $DB --quiet $(hip_sample $t) > $DIR/gen-$t.txt 2>&1; rc=\$?; cat $DIR/gen-$t.txt; exit \$rc"
    cat "$DIR/gen-$t.txt" | sed 's/^/        /'
done

min_ok() {  # min_ok TARGET N
    n=$(q "SELECT count(*) FROM kernel WHERE target='$1' AND status='ok'")
    echo "$1: $n ok kernels"; [ "$n" -ge "$2" ]
}
for t in $TARGETS; do
    [ "$t" = gfx90a ] && continue
    check ">= 100 ok kernels on $t" min_ok "$t" 100
done
check "gfx90a compiled by hipcc" sh -c "sqlite3 $DB \"SELECT kind FROM toolchain WHERE target='gfx90a'\" | grep -x hipcc"
check "gfx90a kernels ok (a sample of 48)" min_ok gfx90a $([ "$ALL" = 1 ] && echo 100 || echo 40)
check "gfx1201 compiled by clang-19" sh -c "sqlite3 $DB \"SELECT kind FROM toolchain WHERE target='gfx1201'\" | grep -x clang"

# resources: the DB against independent tools, on a random sample per target
for t in $TARGETS; do
    check "resources match the tools on 10 random $t kernels" sh tests/check_resources.sh "$DB" "$t" 10
done

# a second run compiles nothing, quickly
for t in gfx1201 $(echo "$TARGETS" | grep -o sm_90a); do
    check "second kt gen $t compiles nothing, < 2 s" sh -c "
        start=\$(date +%s%N); $KT gen --recipe $RECIPE --target $t --db $DB --quiet > $DIR/again.txt 2>&1 || exit 1
        ms=\$(( (\$(date +%s%N) - start) / 1000000 )); cat $DIR/again.txt; echo \"took \$ms ms\"
        grep -q 'compiled 0,' $DIR/again.txt && [ \$ms -lt 2000 ]"
done
# ./tune (tune.lua through the LuaJIT FFI into libkt.so) reaches the same kernels by an absolute
# recipe path: cache keys do not depend on how the recipe was named, so it compiles nothing (the
# dense recipe alone: every recipe would build the attention ones whole, an hour on 2 cores)
check "./tune over the FFI finds gfx1201 current" sh -c "
    ./tune --target gfx1201 --db $DB --recipes $(pwd)/templates/gemm/dense.lua --quiet > $DIR/tune.txt 2>&1 || { cat $DIR/tune.txt; exit 1; }
    cat $DIR/tune.txt; grep -q 'compiled 0,' $DIR/tune.txt"
check "./tune refuses an unknown target before compiling" refuses_tune
check "./tune refuses a recipe file it cannot read, naming it" sh -c "
    if ./tune --target gfx1201 --db $DIR/bad.ktdb --recipes $DIR/no-such-recipe.lua > $DIR/refuse-recipe.txt 2>&1; then exit 1; fi
    cat $DIR/refuse-recipe.txt; grep -q 'cannot read recipe $DIR/no-such-recipe.lua' $DIR/refuse-recipe.txt"
# a changed flag recompiles what it affects (a sample of 16 of that target's variants: the whole
# recipe took 97 s of the CI's 45 minutes), and their old key is replaced by the flag's ... and
# since the flag (a define the template never reads) does not change the code, every recompiled
# kernel is byte-identical to before: code hashes, which measurements key on, survive
q "SELECT name || ' ' || code_hash FROM kernel WHERE target='gfx1100' ORDER BY name" > "$DIR/hash-before.txt"
# (a flag value of its own each run: the compile cache outlives the run, and a value seen before
# would be a cache hit, not a recompile)
flag=$(date +%s%N)
fp0=$(q "SELECT group_concat(DISTINCT fingerprint) FROM kernel WHERE target='gfx1100'")
check "changed flag recompiles gfx1100" sh -c "
    $KT gen --recipe $RECIPE --target gfx1100 --db $DB --quiet --sample 16 --flags -DKT_TEST_FLAG=$flag > $DIR/flag.txt 2>&1 || exit 1
    cat $DIR/flag.txt; v=\$(sed -n 's/.*variants \([0-9]*\).*/\1/p' $DIR/flag.txt | head -1)
    [ \"\$v\" = 16 ] && grep -q \"compiled 16,\" $DIR/flag.txt &&
    [ \$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='gfx1100' AND fingerprint != '$fp0'\") = 16 ] &&
    [ \$(sqlite3 $DB \"SELECT count(DISTINCT fingerprint) FROM kernel WHERE target='gfx1100'\") = 2 ]"
check "recompiled gfx1100 kernels are byte-identical (code_hash)" sh -c "
    sqlite3 $DB \"SELECT name || ' ' || code_hash FROM kernel WHERE target='gfx1100' ORDER BY name\" > $DIR/hash-after.txt
    [ -s $DIR/hash-before.txt ] && diff $DIR/hash-before.txt $DIR/hash-after.txt"
# a compile killed by a signal (an interrupted build, a killed compiler) is the run's failure, not
# the source's: it is neither cached nor stored, so the next run compiles it (a database of its
# own, four variants, a flag value no cache has seen)
kflag=k$(date +%s%N)
check "a compile killed by a signal is not cached: the next run compiles it" sh -c "
    rm -f $DIR/kill.ktdb
    ( i=0; while [ \$i -lt 400 ]; do
          pkill -TERM -f 'bin/[c]lang.*KT_TEST_FLAG=$kflag' && break; i=\$((i + 1)); sleep 0.05; done ) &
    $KT gen --recipe $RECIPE --target gfx1100 --db $DIR/kill.ktdb --quiet --sample 4 -j 1 \
        --flags -DKT_TEST_FLAG=$kflag > $DIR/kill1.txt 2>&1; wait; cat $DIR/kill1.txt
    grep -q 'interrupted [1-9]' $DIR/kill1.txt || exit 1
    $KT gen --recipe $RECIPE --target gfx1100 --db $DIR/kill.ktdb --quiet --sample 4 -j 1 \
        --flags -DKT_TEST_FLAG=$kflag > $DIR/kill2.txt 2>&1 || exit 1
    cat $DIR/kill2.txt; grep -q 'compiled [1-9][0-9]*, cached [0-9]*, failed 0' $DIR/kill2.txt"

# a recipe that stops admitting variants retires what it built of them (excluded, not dispatched,
# measurements kept), and admitting them again brings them back without compiling
rm -rf "$DIR/tpl"; cp -r templates "$DIR/tpl"
sed -i 's/{ "SK", { 1, 2, 4, 8, 16, 32 } }/{ "SK", { 1, 2, 4, 8, 16 } }/' "$DIR/tpl/gemm/dense.lua"
sk32=$(q "SELECT count(*) FROM kernel WHERE target='gfx1201' AND name LIKE 'kt_gemm_dense%_sk32' AND status <> 'excluded'")
check "a recipe's dropped variants are retired ($sk32 sk32 kernels on gfx1201)" sh -c "
    grep -q '{ 1, 2, 4, 8, 16 }' $DIR/tpl/gemm/dense.lua || { echo 'recipe copy not narrowed'; exit 1; }
    $KT gen --recipe $DIR/tpl/gemm/dense.lua --target gfx1201 --db $DB --quiet > $DIR/retire.txt 2>&1 || { cat $DIR/retire.txt; exit 1; }
    cat $DIR/retire.txt; grep -q 'compiled 0,' $DIR/retire.txt && grep -q 'retired $sk32 stored kernels' $DIR/retire.txt &&
    [ $sk32 -gt 0 ] && [ \$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='gfx1201' AND name LIKE 'kt_gemm_dense%_sk32' AND status = 'ok'\") = 0 ] &&
    [ \$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='gfx1100' AND name LIKE 'kt_gemm_dense%_sk32' AND status = 'ok'\") -gt 0 ]"
check "admitted again, retired kernels come back without compiling" sh -c "
    $KT gen --recipe $RECIPE --target gfx1201 --db $DB --quiet > $DIR/unretire.txt 2>&1 || { cat $DIR/unretire.txt; exit 1; }
    cat $DIR/unretire.txt; grep -q 'compiled 0,' $DIR/unretire.txt && ! grep -q retired $DIR/unretire.txt &&
    [ \$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='gfx1201' AND name LIKE 'kt_gemm_dense%_sk32' AND status <> 'excluded'\") = $sk32 ]"

# refusals: each names the fault
refuses() {  # refuses EXPECTED-TEXT ARGS...: kt must fail with a message containing the text
    want=$1; shift
    if $KT "$@" > "$DIR/refuse.txt" 2>&1; then echo "kt $* succeeded"; return 1; fi
    cat "$DIR/refuse.txt"; grep -q -- "$want" "$DIR/refuse.txt"
}
check "bad recipe: file and line" refuses "unknown_axis.lua:6: unknown axis 'BN'" gen --recipe tests/data/recipes/toy/unknown_axis.lua --target gfx1201 --db "$DIR/bad.ktdb"
check "bad recipe: syntax" refuses "syntax.lua:5:" gen --recipe tests/data/recipes/toy/syntax.lua --target gfx1201 --db "$DIR/bad.ktdb"
check "bad recipe: empty space" refuses "empty.lua:5: recipe admits no variant" gen --recipe tests/data/recipes/toy/empty.lua --target gfx1201 --db "$DIR/bad.ktdb"
check "unknown target" refuses "unknown target 'gfx9999'" gen --recipe $RECIPE --target gfx9999 --db "$DIR/bad.ktdb"
printf 'not a database at all, but long enough to have a header of some sort.........' > "$DIR/corrupt.ktdb"
check "corrupt database" refuses "corrupt.ktdb: not a ktune database" gen --recipe $RECIPE --target gfx1201 --db "$DIR/corrupt.ktdb"
check "missing option" refuses "are required" gen --recipe $RECIPE
check "kt problems: a model that does not divide by tp" refuses "num_attention_heads 28 is not divisible by tp 8" problems --modelpath models/qwen2.5-7b-instruct --tp 8
check "kt problems lists a model's keys" sh -c "$KT problems --modelpath models/llama-3.1-8b --tp 4 | grep -x 'gemm bf16 n=7168 k=4096 m<=16.gate_up x32/forward'"
check "kt problems lists every family's keys, --only picks some" sh -c "$KT problems --modelpath models/llama-3.1-8b --tp 4 | grep -x 'rmsnorm_add bf16 hidden=4096 rows<=64.input_norm,post_attn_norm x64/forward' && [ \$($KT problems --modelpath models/llama-3.1-8b --tp 4 --only rmsnorm_add | wc -l) = 14 ]"

# the Hopper-only template: built on sm_90a, skipped (not an error) elsewhere; its stages take
# dynamic shared memory past the static 48 KiB, which occupancy counts; its loop is wgmma
WG=templates/gemm/wgmma.lua
check "wgmma recipe builds nothing on gfx1201, and says why" sh -c "
    $KT gen --recipe $WG --target gfx1201 --db $DB --quiet > $DIR/wg-amd.txt 2>&1 || { cat $DIR/wg-amd.txt; exit 1; }
    cat $DIR/wg-amd.txt; grep -q 'written for sm_90a only' $DIR/wg-amd.txt &&
    [ \$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_wgmma%' AND target='gfx1201'\") = 0 ]"
check "wgmma_ws and wgmma_ws_swapab recipes build nothing on gfx1201" sh -c "
    for r in wgmma_ws wgmma_ws_swapab; do
        $KT gen --recipe templates/gemm/\$r.lua --target gfx1201 --db $DB --quiet > $DIR/ws-amd.txt 2>&1 || { cat $DIR/ws-amd.txt; exit 1; }
        grep -q 'written for sm_90a only' $DIR/ws-amd.txt || exit 1
    done
    [ \$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_wgws%' AND target='gfx1201'\") = 0 ]"
# swapab's stream-K variants (SK = 0) alone, from a narrowed copy of the recipe: they compile on
# the RDNA4 target without spills (the partition arithmetic of abi/gemm.h runs in the kernel)
sed -i 's/{ "SK", { 0, 1, 2, 4 } }/{ "SK", { 0 } }/' "$DIR/tpl/gemm/swapab.lua"
check "swapab stream-K (SK = 0) on gfx1201: >= 24 ok kernels, none spilling" sh -c "
    grep -q '{ \"SK\", { 0 } }' $DIR/tpl/gemm/swapab.lua || { echo 'recipe copy not narrowed'; exit 1; }
    $KT gen --recipe $DIR/tpl/gemm/swapab.lua --target gfx1201 --db $DB --quiet > $DIR/sk0.txt 2>&1 || { cat $DIR/sk0.txt; exit 1; }
    n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_swapab%_sk0' AND target='gfx1201' AND status='ok' AND spills = 0\")
    bad=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_swapab%_sk0' AND target='gfx1201' AND status <> 'ok'\")
    echo \"\$n ok, \$bad not ok\"; [ \$n -ge 24 ] && [ \$bad = 0 ]"
# Below, a generated source is found by its kernel name and its first line ("... for TARGET; do not
# edit"): the name alone is shared by every target built from the recipe.
if echo "$TARGETS" | grep -q sm_90a; then
    check "swapab stream-K on sm_90a: >= 50 ok kernels, none spilling; the PTX reads the grid size and bumps counters" sh -c "
        $KT gen --recipe $DIR/tpl/gemm/swapab.lua --target sm_90a --db $DB --quiet > $DIR/sk0n.txt 2>&1 || { cat $DIR/sk0n.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_swapab%_sk0' AND target='sm_90a' AND status='ok' AND spills = 0\")
        echo \"\$n ok\"; [ \$n -ge 50 ] || exit 1
        src=\$(grep -l ' for sm_90a; ' \$(grep -l 'KT_KERNEL_NAME kt_gemm_swapab_bf16_bm16_bn32_bk64_wm8_wn1_sk0\$' \$KT_CACHE/src/*.hip) /dev/null | head -1)
        [ -n \"\$src\" ] || { echo 'no cached sm_90a source'; exit 1; }
        nvcc -ptx -gencode arch=compute_90a,code=sm_90a -O3 -x cu -std=c++17 -Itemplates \"\$src\" -o $DIR/sk0.ptx &&
        grep -q '%nctaid.x' $DIR/sk0.ptx && grep -q 'atom.global.add.u32' $DIR/sk0.ptx && grep -q 'ld.global.cg.f32' $DIR/sk0.ptx"
    # warp-specialized: 12 warps, stages in dynamic shared memory (4 x 48 KiB + 1 KiB of alignment)
    # plus the 64 static bytes of the 8 mbarriers, no spills (the split-K variants spill if the
    # element-by-element copy loop is unrolled)
    check "wgmma_ws on sm_90a: >= 40 ok kernels, none spilling, 12 warps, 4 x 48 KiB stages counted" sh -c "
        $KT gen --recipe templates/gemm/wgmma_ws.lua --target sm_90a --db $DB --quiet > $DIR/ws.txt 2>&1 || { cat $DIR/ws.txt; exit 1; }
        q() { sqlite3 $DB \"\$1\"; }
        n=\$(q \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_wgws%' AND target='sm_90a' AND status='ok' AND spills = 0\")
        bad=\$(q \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_wgws%' AND target='sm_90a' AND status <> 'ok'\")
        big=\$(q \"SELECT lds_bytes || ' ' || waves_per_simd FROM kernel WHERE name = 'kt_gemm_wgws_bf16_bm128_bn256_bk64_wm12_wn1_sk1_st4'\")
        echo \"\$n ok, \$bad not ok; bm128_bn256_sk1_st4: lds waves = \$big\"; [ \$n -ge 40 ] && [ \$bad = 0 ] && [ \"\$big\" = '197696 12' ]"
    check "wgmma_ws PTX: mbarrier waits, hardware-tracked cp.async arrivals, predicate-free interior copies" sh -c "
        src=\$(grep -l ' for sm_90a; ' \$(grep -l 'KT_KERNEL_NAME kt_gemm_wgws_bf16_bm128_bn256_bk64_wm12_wn1_sk1_st4\$' \$KT_CACHE/src/*.hip) /dev/null | head -1)
        [ -n \"\$src\" ] || { echo 'no cached sm_90a source'; exit 1; }
        nvcc -ptx -gencode arch=compute_90a,code=sm_90a -O3 -x cu -std=c++17 -Itemplates \"\$src\" -o $DIR/ws.ptx &&
        grep -q 'mbarrier.try_wait.parity' $DIR/ws.ptx && grep -q 'cp.async.mbarrier.arrive.noinc' $DIR/ws.ptx &&
        grep -q 'wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16' $DIR/ws.ptx &&
        n=\$(grep -c 'cp.async.cg.shared.global \[%r[0-9]*\], \[%rd[0-9]*\], 16;' $DIR/ws.ptx) && echo \"\$n predicate-free cp.async\" && [ \$n -ge 24 ]"
    check "wgmma_ws_swapab on sm_90a: >= 80 ok kernels, none spilling; the bm16 PTX has m64n16k16 and the mbarrier ring" sh -c "
        $KT gen --recipe templates/gemm/wgmma_ws_swapab.lua --target sm_90a --db $DB --quiet > $DIR/wss.txt 2>&1 || { cat $DIR/wss.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_wgwsswap%' AND target='sm_90a' AND status='ok' AND spills = 0\")
        echo \"\$n ok\"; [ \$n -ge 80 ] || exit 1
        src=\$(grep -l ' for sm_90a; ' \$(grep -l 'KT_KERNEL_NAME kt_gemm_wgwsswap_bf16_bm16_bn64_bk64_wm1_wn8_sk1_st8\$' \$KT_CACHE/src/*.hip) /dev/null | head -1)
        [ -n \"\$src\" ] || { echo 'no cached sm_90a source'; exit 1; }
        nvcc -ptx -gencode arch=compute_90a,code=sm_90a -O3 -x cu -std=c++17 -Itemplates \"\$src\" -o $DIR/wss.ptx &&
        grep -q 'wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16' $DIR/wss.ptx &&
        grep -q 'mbarrier.try_wait.parity' $DIR/wss.ptx && grep -q 'cp.async.mbarrier.arrive.noinc' $DIR/wss.ptx"
    check "wgmma on sm_90a: >= 30 ok kernels, dynamic shared memory counted" sh -c "
        $KT gen --recipe $WG --target sm_90a --db $DB --quiet > $DIR/wg.txt 2>&1 || { cat $DIR/wg.txt; exit 1; }
        q() { sqlite3 $DB \"\$1\"; }
        n=\$(q \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_wgmma%' AND target='sm_90a' AND status='ok'\")
        big=\$(q \"SELECT lds_bytes || ' ' || waves_per_simd FROM kernel WHERE name = 'kt_gemm_wgmma_bf16_bm128_bn256_bk64_wm8_wn1_sk1_st4'\")
        echo \"\$n ok; bm128_bn256_st4: lds waves = \$big\"; [ \$n -ge 30 ] && [ \"\$big\" = '197632 8' ]"
    check "wgmma_swapab on sm_90a: >= 40 ok kernels" sh -c "
        $KT gen --recipe templates/gemm/wgmma_swapab.lua --target sm_90a --db $DB --quiet > $DIR/wgs.txt 2>&1 || { cat $DIR/wgs.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gemm_wgswap%' AND target='sm_90a' AND status='ok'\")
        echo \"\$n ok\"; [ \$n -ge 40 ]"
    check "wgmma instantiation's PTX has wgmma.mma_async and cp.async" sh -c "
        src=\$(grep -l ' for sm_90a; ' \$(grep -l 'KT_KERNEL_NAME kt_gemm_wgmma_bf16_bm128_bn128_bk64_wm8_wn1_sk1_st4\$' \$KT_CACHE/src/*.hip) /dev/null | head -1)
        [ -n \"\$src\" ] || { echo 'no cached sm_90a source'; exit 1; }
        nvcc -ptx -gencode arch=compute_90a,code=sm_90a -O3 -x cu -std=c++17 -Itemplates \"\$src\" -o $DIR/wg.ptx &&
        grep -c 'wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16' $DIR/wg.ptx && grep -q 'cp.async.cg.shared.global' $DIR/wg.ptx"
fi

# the fused add + RMSNorm (op rmsnorm_add, templates/norm/rmsnorm_add.lua): every variant the
# recipe admits builds on every target with no spill and no scratch, and its packs of 8 are
# 16-byte moves in the code (AMD: the code object's disassembly; sm_90a: the cached source's PTX)
RMS=templates/norm/rmsnorm_add.lua
RMSK=kt_rmsnorm_add_bf16_rb1_vw8_th256_un2
for t in $TARGETS; do
    check "rmsnorm_add on $t: >= 40 ok kernels, none failed, excluded, spilling or using scratch" sh -c "
        $KT gen --recipe $RMS --target $t --db $DB --quiet $(hip_sample $t) > $DIR/rms-$t.txt 2>&1 || { cat $DIR/rms-$t.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_rmsnorm_add%' AND target='$t' AND status='ok' AND spills = 0 AND scratch_bytes = 0\")
        bad=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_rmsnorm_add%' AND target='$t' AND (status <> 'ok' OR spills > 0 OR scratch_bytes > 0)\")
        echo \"\$n ok, \$bad not\"; [ \$n -ge 40 ] && [ \$bad = 0 ]"
done
for t in gfx1201 gfx942; do
    check "rmsnorm_add $t: 16-byte global loads and stores" sh -c "
        sqlite3 $DB \"SELECT writefile('$DIR/rms-$t.co', code) FROM kernel WHERE name='$RMSK' AND target='$t'\" > /dev/null &&
        llvm-objdump-19 -d $DIR/rms-$t.co > $DIR/rms-$t.dis &&
        l=\$(grep -cE 'global_load_(b128|dwordx4)' $DIR/rms-$t.dis) && s=\$(grep -cE 'global_store_(b128|dwordx4)' $DIR/rms-$t.dis) &&
        echo \"\$l 16-byte loads, \$s 16-byte stores\" && [ \$l -ge 6 ] && [ \$s -ge 4 ]"
done
if echo "$TARGETS" | grep -q sm_90a; then
    check "rmsnorm_add sm_90a: the PTX moves 16 bytes (ld.global.v4, ld.global.nc.v4 for the weight, st.global.v4)" sh -c "
        src=\$(grep -l ' for sm_90a; ' \$(grep -l 'KT_KERNEL_NAME $RMSK\$' \$KT_CACHE/src/*.hip) /dev/null | head -1)
        [ -n \"\$src\" ] || { echo 'no cached sm_90a source'; exit 1; }
        nvcc -ptx -gencode arch=compute_90a,code=sm_90a -O3 -x cu -std=c++17 -Itemplates \"\$src\" -o $DIR/rms.ptx &&
        grep -q 'ld.global.v4.u32' $DIR/rms.ptx && grep -q 'ld.global.nc.v4.u32' $DIR/rms.ptx && grep -q 'st.global.v4.u32' $DIR/rms.ptx"
fi

# paged decode attention (op attn_decode, templates/attn/decode.lua): a sample on every target
# (gfx1201, the product, a larger one; the whole recipe under KT_COMPILE_ALL), then on gfx1201
# the narrowed spaces the checks below need whole: head size 512 (within its 64 KiB of LDS) and
# the F8 form at d256; ok kernels spill nothing, the split-KV reduce is in every code object
ATTN=templates/attn/decode.lua
for t in $TARGETS; do
    if [ "$t" = gfx1201 ]; then n=96; want=40; else n=24; want=18; fi
    [ "$ALL" = 1 ] && [ "$t" = gfx1201 ] && want=140
    check "attn_decode on $t: >= $want ok kernels, none failed, ok ones spill nothing" sh -c "
        $KT gen --recipe $ATTN --target $t --db $DB --quiet $(sample $n) > $DIR/attn-$t.txt 2>&1 || { cat $DIR/attn-$t.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_attn_decode%' AND target='$t' AND status='ok' AND spills = 0 AND scratch_bytes = 0\")
        f=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_attn_decode%' AND target='$t' AND status = 'failed'\")
        echo \"\$n ok, \$f failed\"; [ \$n -ge $want ] && [ \$f = 0 ]"
done
narrow $ATTN $DIR/tpl/attn/decode_d512.lua 'D { 512 }'
narrow $ATTN $DIR/tpl/attn/decode_f8.lua 'dtype { "bf16_e4m3" }' 'D { 256 }' 'BN { 32 }' 'NW { 4 }' 'F8 { 1 }'
check "attn_decode gfx1201: head size 512 (a sample of its space) built within 64 KiB of LDS, reduce present" sh -c "
    grep -q '{ \"D\", { 512 } }' $DIR/tpl/attn/decode_d512.lua || { echo 'recipe copy not narrowed'; exit 1; }
    $KT gen --recipe $DIR/tpl/attn/decode_d512.lua --target gfx1201 --db $DB --quiet $(subset 16) > $DIR/attn512.txt 2>&1 || { cat $DIR/attn512.txt; exit 1; }
    sqlite3 $DB \"SELECT name, lds_bytes FROM kernel WHERE target='gfx1201' AND status='ok' AND name LIKE 'kt_attn_decode_%_d512_%'\" | head -3 &&
    [ \$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='gfx1201' AND status='ok' AND name LIKE 'kt_attn_decode_%_d512_%' AND lds_bytes <= 65536\") -ge 4 ] &&
    [ \$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='gfx1201' AND status='failed' AND name LIKE 'kt_attn_decode_%_d512_%'\") = 0 ] &&
    [ \$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='gfx1201' AND status='ok' AND name LIKE 'kt_attn_decode_bf16_e4m3_%'\") -ge 20 ] &&
    sqlite3 $DB \"SELECT writefile('$DIR/attn.co', code) FROM kernel WHERE target='gfx1201' AND status='ok' AND name LIKE 'kt_attn_decode_%_d512_%' LIMIT 1\" > /dev/null &&
    llvm-readelf-19 --notes $DIR/attn.co | grep -q '_reduce'"
# F8 (S in e4m3, K as the fp8 cache holds it): gfx12's fp8 WMMA in the code, no K conversion left
check "attn_decode gfx1201: F8 kernels (bf16 e4m3 d256 BN32 NW4, every one) built, S in v_wmma_f32_16x16x16_fp8_fp8" sh -c "
    grep -q '{ \"F8\", { 1 } }' $DIR/tpl/attn/decode_f8.lua || { echo 'recipe copy not narrowed'; exit 1; }
    $KT gen --recipe $DIR/tpl/attn/decode_f8.lua --target gfx1201 --db $DB --quiet $WHOLE > $DIR/attnf8.txt 2>&1 || { cat $DIR/attnf8.txt; exit 1; }
    n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='gfx1201' AND status='ok' AND spills = 0 AND name LIKE 'kt_attn_decode_bf16_e4m3_%_f81'\")
    f=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='gfx1201' AND status='failed' AND name LIKE 'kt_attn_decode_bf16_e4m3_%'\")
    echo \"\$n ok, \$f failed\"; [ \$n -ge $([ "$ALL" = 1 ] && echo 40 || echo 10) ] && [ \$f = 0 ] &&
    sqlite3 $DB \"SELECT writefile('$DIR/attn_f8.co', code) FROM kernel WHERE target='gfx1201' AND status='ok' AND name LIKE 'kt_attn_decode_bf16_e4m3_d256_mt1_bn32_nw4_%_ob0_pf0_f81' LIMIT 1\" > /dev/null &&
    llvm-objdump-19 -d --mcpu=gfx1201 $DIR/attn_f8.co | grep -c 'v_wmma_f32_16x16x16_fp8_fp8' | grep -qv '^0$'"

# decode with the keys split over the warps (templates/attn/decode_ws.lua): a sample on every target
# (AMD: the register stage, ST 1; NVIDIA: the ring), every ok kernel spilling nothing, fp8 caches
# among them (NVIDIA: raw stages read through KR; AMD: converted as they are stored)
WS=templates/attn/decode_ws.lua
for t in $TARGETS; do
    check "attn_decode (keys over the warps) on $t: >= 4 ok kernels of a sample of 8, fp8 ones too, none failed" sh -c "
        $KT gen --recipe $WS --target $t --db $DB --quiet $(sample 8) > $DIR/ws-$t.txt 2>&1 || { cat $DIR/ws-$t.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_attn_decode_ws%' AND target='$t' AND status='ok' AND spills = 0 AND scratch_bytes = 0\")
        n8=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_attn_decode_ws_%e4m3%' AND target='$t' AND status='ok' AND spills = 0 AND scratch_bytes = 0\")
        f=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_attn_decode_ws%' AND target='$t' AND status = 'failed'\")
        echo \"\$n ok (\$n8 fp8), \$f failed\"; [ \$n -ge 4 ] && [ \$n8 -ge 1 ] && [ \$f = 0 ]"
done

# the attention ops' float64 GPU reference (templates/ref/attn_ref.lua, ops reference:attn_decode
# and reference:attn_prefill): one kernel per dtype on every target, no spill (SGPR ones included:
# the series' constants live in LDS for that), no scratch; the verifier loads it by the name
# attn_common.c's kt_attn_ref_gpu_name gives
for t in $TARGETS; do
    check "attn_ref on $t: the 4 dtypes ok, none spilling or using scratch" sh -c "
        $KT gen --recipe templates/ref/attn_ref.lua --target $t --db $DB --quiet > $DIR/attnref-$t.txt 2>&1 || { cat $DIR/attnref-$t.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE target='$t' AND status='ok' AND spills = 0 AND scratch_bytes = 0 AND ops = 'reference:attn_decode,reference:attn_prefill'
            AND name IN ('kt_attn_ref_bf16', 'kt_attn_ref_fp16', 'kt_attn_ref_bf16_e4m3', 'kt_attn_ref_fp16_e4m3')\")
        echo \"\$n of 4 ok\"; [ \$n = 4 ] || { cat $DIR/attnref-$t.txt; exit 1; }"
done

# paged prefill attention (op attn_prefill, templates/attn/prefill.lua): the whole recipe on
# gfx1201, a sample of 16 elsewhere; nothing fails to compile, ok kernels spill nothing (the
# recipe's register estimate is a filter: variants that spill are excluded by the build, with the
# reason), and each target has some ok kernels (gfx1201: 16 of 66 with the WD axis, the d64 WD 1
# ones and d128 BM64 BN32 NW8 WD2; sm_90a: every bf16 / bf16_e4m3 d128-d256 variant compiled
# here, 14 of 14)
PRE=templates/attn/prefill.lua
for t in $TARGETS; do
    if [ "$t" = gfx1201 ]; then pick=""; want=15; else pick=$(sample 16); want=1; fi
    check "attn_prefill on $t: >= $want ok kernels, none failed, ok ones spill nothing" sh -c "
        $KT gen --recipe $PRE --target $t --db $DB --quiet $pick > $DIR/pre-$t.txt 2>&1 || { cat $DIR/pre-$t.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_attn_prefill%' AND target='$t' AND status='ok' AND spills = 0 AND scratch_bytes = 0\")
        f=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_attn_prefill%' AND target='$t' AND (status = 'failed' OR (status = 'ok' AND (spills > 0 OR scratch_bytes > 0)))\")
        echo \"\$n ok, \$f failed or spilling\"; [ \$n -ge $want ] && [ \$f = 0 ]"
done

# the fused GDN decode step (op gdn_decode, templates/gdn/decode.lua): the whole recipe on gfx1201,
# a sample of 48 on sm_90a (the whole of it took 407 s of the CI's 45 minutes) and 16 elsewhere;
# nothing fails to compile, ok kernels spill nothing, the forms that hold a head in one block (BV =
# DV, the gated norm without a hand-off) are ok on gfx1201 in both state layouts; on gfx1201 the
# state moves in 16-byte pieces (global_load_b128 / global_store_b128); on sm_90a the law's picks of
# the issue's decode rows are ok and spill nothing (bv32 nw8 kpt4 mt1 / mt8 at batch 1, bv128 nw8
# kpt16 mt1 ob2 at batch 128, bv128 nw8 kpt16 mt8 for 4 tokens; their L2-prefetch twins (pf1, the
# sweep's to take until timed); and the persistent twin ps2, which
# the law no longer takes: measured 0.80x, left to the sweep): the OB 2 ones sit at their
# 128-register edge, which small changes cross
GDN=templates/gdn/decode.lua
GDNK=kt_gdn_decode_bf16_vk0_dk128_dv128_bv128_nw8_kpt8_mt1_ob0_ps0_pf0
for t in $TARGETS; do
    case $t in gfx1201) pick=""; want=60 ;; sm_90a) pick=$(sample 48); want=30 ;; *) pick=$(sample 16); want=1 ;; esac
    check "gdn_decode on $t: >= $want ok kernels, none failed, ok ones spill nothing" sh -c "
        $KT gen --recipe $GDN --target $t --db $DB --quiet $pick > $DIR/gdn-$t.txt 2>&1 || { cat $DIR/gdn-$t.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gdn_decode%' AND target='$t' AND status='ok' AND spills = 0 AND scratch_bytes = 0\")
        f=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gdn_decode%' AND target='$t' AND (status = 'failed' OR (status = 'ok' AND (spills > 0 OR scratch_bytes > 0)))\")
        echo \"\$n ok, \$f failed or spilling\"; [ \$n -ge $want ] && [ \$f = 0 ]"
done
if echo "$TARGETS" | grep -q gfx1201; then
    check "gdn_decode gfx1201: the one-block norm's forms (BV = DV) ok in both layouts; the state in 16-byte moves" sh -c "
        for vk in 0 1; do
            n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gdn_decode_bf16_vk\${vk}_dk128_dv128_bv128%' AND target='gfx1201' AND status='ok'\")
            echo \"vk\$vk bv128: \$n ok\"; [ \$n -ge 1 ] || exit 1
        done
        sqlite3 $DB \"SELECT writefile('$DIR/gdn.co', code) FROM kernel WHERE name='$GDNK' AND target='gfx1201'\" > /dev/null &&
        llvm-objdump-19 -d $DIR/gdn.co > $DIR/gdn.dis &&
        l=\$(grep -c 'global_load_b128' $DIR/gdn.dis) && s=\$(grep -c 'global_store_b128' $DIR/gdn.dis) &&
        echo \"\$l 16-byte loads, \$s 16-byte stores\" && [ \$l -ge 8 ] && [ \$s -ge 8 ]"
fi
if echo "$TARGETS" | grep -q sm_90a; then
    GDNL=templates/gdn/_decode_picks.lua
    narrow $GDN $GDNL 'dtype { "bf16" }' 'VK { 0 }' 'BV { 32, 128 }' 'NW { 8 }' 'KPT { 4, 16 }'
    check "gdn_decode sm_90a: the law's picks of the issue's rows (and the persistent form, measured 0.80x, the sweep's to take) are ok and spill nothing" sh -c "
        $KT gen --recipe $GDNL --target sm_90a --db $DB --quiet $WHOLE > $DIR/gdnl.txt 2>&1 || { cat $DIR/gdnl.txt; exit 1; }
        for f in bv32_nw8_kpt4_mt1_ob0_ps0_pf0 bv32_nw8_kpt4_mt8_ob0_ps0_pf0 bv128_nw8_kpt16_mt1_ob2_ps0_pf0 bv128_nw8_kpt16_mt1_ob2_ps0_pf1 bv128_nw8_kpt16_mt1_ob2_ps2_pf0 bv128_nw8_kpt16_mt8_ob0_ps0_pf0 bv128_nw8_kpt16_mt8_ob2_ps0_pf1; do
            n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name='kt_gdn_decode_bf16_vk0_dk128_dv128_\$f' AND target='sm_90a' AND status='ok' AND spills = 0 AND scratch_bytes = 0\")
            echo \"\$f: \$n ok\"; [ \$n = 1 ] || exit 1
        done"
    rm -f $GDNL
fi

# the chunked GDN prefill (op gdn_prefill, templates/gdn/prefill.lua, four kernels a code object,
# _prep empty where _wy does its work, each held to the spill rules through the recipe's companions): the deployed chunk (BT 64, bf16,
# vLLM's K-last state) whole on every target but gfx90a (a sample), everything with KT_COMPILE_ALL;
# nothing fails, ok kernels spill nothing, and a form for one long sequence (BV 16, the loads a
# chunk ahead: PF 1, the law's choice where PF 4 spills) is ok on gfx1201 and sm_90a (of the 18 BT 64 forms, gfx1201 takes the 9
# whose LDS fits its 64 KiB (the NW 8 forms' partial vn^T do not) and builds 8 without spilling in
# the K-last layout (4 in [.., K, V]), sm_90a 25 (18))
GDNP=templates/gdn/_prefill_bt64.lua
narrow templates/gdn/prefill.lua $GDNP 'dtype { "bf16" }' 'VK { 1 }' 'BT { 64 }'
for t in $TARGETS; do
    case $t in gfx1201) want=4 ;; sm_90a) want=18 ;; *) want=1 ;; esac
    if [ "$ALL" = 1 ]; then rec=templates/gdn/prefill.lua; pick=""; else rec=$GDNP; pick=""; [ $t = gfx90a ] && pick="--sample 6"; fi
    check "gdn_prefill on $t: >= $want ok kernels, none failed, ok ones (and their _prep, _wy, _out) spill nothing" sh -c "
        $KT gen --recipe $rec --target $t --db $DB --quiet $pick > $DIR/gdnp-$t.txt 2>&1 || { cat $DIR/gdnp-$t.txt; exit 1; }
        n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gdn_prefill%' AND target='$t' AND status='ok' AND spills = 0 AND scratch_bytes = 0\")
        f=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gdn_prefill%' AND target='$t' AND (status = 'failed' OR (status = 'ok' AND (spills > 0 OR scratch_bytes > 0)))\")
        echo \"\$n ok, \$f failed or spilling\"; [ \$n -ge $want ] && [ \$f = 0 ]"
    case $t in gfx1201|sm_90a)
        check "gdn_prefill on $t: a form for one long sequence (bt64 bv16 pf1: the law's where pf4 spills) is ok" sh -c "
            n=\$(sqlite3 $DB \"SELECT count(*) FROM kernel WHERE name LIKE 'kt_gdn_prefill_bf16_vk1_dk128_dv128_bt64_bv16_nw%_pf1' AND target='$t' AND status='ok'\")
            echo \"\$n ok\"; [ \$n -ge 1 ]" ;;
    esac
done
rm -f $GDNP

echo "compile: $checks checks, $failed failed"
[ "$failed" = 0 ]
