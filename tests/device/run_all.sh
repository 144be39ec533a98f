#!/bin/sh
# run_all.sh: the one command on the GPU machine, after tests/device/pack.sh here and carrying
# out/bin, out/lib and out/device:
#
#     sh tests/device/run_all.sh
#
# Steps, in order (KT_DEVICE_STEPS, comma-separated, picks some; default all):
#   check  gemm_check over the exported sm_90a kernels (out/device/export, written by pack.sh)
#   ref    kt worker --check-reference: the GPU reference GEMM against the float64 CPU reference
#   sweep  tests/device/sweep_all.sh: ./tune --resume for every models/* at tp 4 then 1 into DB, within
#          KT_DEADLINE_S (default 540 s), every op family (GEMM, rmsnorm_add)
#   dump   kt dump --db DB (to dump.txt)
#   ktrt   ktrt_check on DB: libktrt alone, every selection, untuned shapes, capture, threads
#   bench  bench_gemm on DB against cuBLAS (table in bench.log, every number in bench_gemm.tsv)
#   rms    tests/device/bench_rmsnorm.py on DB: rmsnorm_add through ktrt_run against torch eager and
#          torch.compile (table in rms.log, numbers in bench_rmsnorm.tsv)
#   attn   attnsweep, attncheck and attnbench (each can be named alone): attn_decode: ./tune over tests/device/attn_shapes.json into DB (attn-sweep.log), then
#          tests/device/bench_attn.py: a correctness grid through ktrt_run (tuned and law paths, every
#          dtype, windows, soft-cap, sinks, q > 1, block sizes 16 and 64; attn-check.log) and the
#          issue's timing grid against torch SDPA's cuDNN and flash backends (attn.log, numbers in
#          bench_attn-<geometry>.tsv), then its ratio bars paired a round (tests/device/ratio_attn.py)
#   prefill attn_prefill: ./tune over tests/device/attn_prefill_shapes.json (verified against the
#          float64 CPU reference, then timed; prefill-sweep.log, budget KT_PREFILL_MIN each;
#          KT_PREFILL_SHAPES names other shape files, swept in turn)
#   prefillbench tests/device/bench_prefill.py: the issue's prefill grid (4 geometries, 4K and 32K
#          tokens) against SDPA's cuDNN and flash in TFLOP/s (prefill.log, bench_prefill.tsv;
#          KT_PREFILL_ARGS replaces its arguments)
#   gdn    gdnsweep, gdncheck and gdnbench (each can be named alone): gdn_decode: ./tune on
#          Qwen3-Next at --tp 4 (--only gdn_decode, every candidate verified against the float64
#          reference, then timed; gdn-sweep.log), tests/device/gdn_check.py (chains of plain and
#          speculative steps against the per-token recurrence; gdn-check.log) and
#          tests/device/bench_gdn.py (hot and cold, against plain PyTorch and the ceilings;
#          gdn.log, bench_gdn.tsv; KT_GDN_ARGS replaces its arguments)
# DB is KT_DEVICE_DB, default out/device/ktune.ktdb. Each step's output goes to
# ${OUT:-out/device/results}/<step>.log, with one status line here as it ends, and a table of all
# steps at the end; the exit status is non-zero when any step failed. At most 8 files come back
# from $OUT: under the device tool the logs and tables go into one file, $OUT/results.tgz, beside,
# after a sweep, the database (tests/device/return_db.sh: ktune.ktdb.gz, or ktune-nocode.ktdb.xz
# past 16 MiB; KT_RETURN_DB=0 leaves it).
# Extra arguments per step: KT_SWEEP_ARGS (e.g. "--budget-min 6"), KT_BENCH_ARGS (e.g.
# "--tp 4 --m 1,16,1024"), KT_KTRT_ARGS, KT_RMS_ARGS (e.g. "--hidden 4096 --rows 1,64,8192").
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
RES=${OUT:-out/device/results}
mkdir -p "$RES" || exit 1
DB=${KT_DEVICE_DB:-out/device/ktune.ktdb}
STEPS=${KT_DEVICE_STEPS:-check,ref,sweep,dump,ktrt,bench,rms,attn,prefill,prefillbench,gdn}
# pack.sh's database may travel compressed (the device tool carries 64 MiB)
if [ ! -f "$DB" ] && [ -f "$DB.gz" ]; then
    gunzip -k "$DB.gz" || exit 1
fi
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
SUMMARY=$(mktemp)
FAILED=0

nvidia-smi --query-gpu=name,driver_version,pci.device_id,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv 2>&1 || echo "run_all: nvidia-smi failed"
echo "run_all: steps $STEPS; DB $DB; logs in $RES"

now() { date +%s.%N; }

# step NAME LOG COMMAND...: runs COMMAND with stdout and stderr in $RES/LOG when NAME is selected.
step() {
    name=$1 log=$2
    shift 2
    case ",$STEPS," in
        *",$name,"*) ;;
        *) printf '%-6s %-5s %8s  %s\n' "$name" skip - "" >> "$SUMMARY"; return 0 ;;
    esac
    echo "run_all: [$name] started $(date +%H:%M:%S)"
    t0=$(now)
    "$@" > "$RES/$log" 2>&1
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}')
    if [ $rc -eq 0 ]; then st=pass; else st=fail; FAILED=1; fi
    # The last line is each tool's own summary ("ktrt_check: N cases, F failed", ...).
    last=$(grep -v '^[[:space:]]*$' "$RES/$log" | tail -n 1 | cut -c1-150)
    printf '%-6s %-5s %7ss  rc=%d  %s\n' "$name" "$st" "$secs" "$rc" "$last" >> "$SUMMARY"
    echo "run_all: [$name] $st (rc $rc) in ${secs}s: $last"
}

need() {   # need FILE WHAT: a command that fails with a message when FILE is missing
    [ -e "$1" ] && return 0
    echo "run_all: $1 missing: $2"
    return 1
}

run_check() {
    need out/device/export/manifest.txt "run tests/device/pack.sh here (it exports the kernels)" || return 1
    out/device/gemm_check out/device/export/manifest.txt
}

run_ref() {
    need "$DB" "pack.sh builds it (the reference kernel is in it)" || return 1
    out/bin/kt worker --check-reference --db "$DB"
}

run_sweep() {
    KT_DEVICE_DB="$DB" KT_RETURN_DB=0 OUT="$RES" sh tests/device/sweep_all.sh
}

run_dump() {
    need "$DB" "no database to dump" || return 1
    out/bin/kt dump --db "$DB"
}

run_ktrt() {
    need "$DB" "no database to check" || return 1
    # shellcheck disable=SC2086
    out/device/ktrt_check --db "$DB" ${KT_KTRT_ARGS:-}
}

run_bench() {
    need "$DB" "no database to bench" || return 1
    # shellcheck disable=SC2086
    out/bin/bench_gemm --db "$DB" --models models --read-cubin out/device/read.cubin --tsv "$RES/bench_gemm.tsv" \
        ${KT_BENCH_ARGS:-}
}

step check check.log run_check
step ref ref.log run_ref
step sweep sweep.log run_sweep
step dump dump.txt run_dump
step ktrt ktrt.log run_ktrt
step bench bench.log run_bench
run_rms() {
    need "$DB" "no database to bench" || return 1
    PYTHONUNBUFFERED=1 OUT="$RES" python3 tests/device/bench_rmsnorm.py --db "$DB" ${KT_RMS_ARGS:-}
}
step rms rms.log run_rms
run_attn_sweep() {
    need "$DB" "no database to tune into" || return 1
    # the model's own attention problems at its tp (KT_ATTN_MODEL, KT_ATTN_TP), then the shapes of
    # tests/device/attn_shapes.json (the timing grid's keys and a few others; KT_ATTN_SHAPES names
    # another file, e.g. tests/device/attn_spec_shapes.json), each in its budget
    if [ "${KT_ATTN_BUDGET_MIN:-3}" != 0 ]; then
        ./tune --modelpath "${KT_ATTN_MODEL:-models/qwen3-next-80b-a3b}" --tp "${KT_ATTN_TP:-4}" --target sm_90a \
            --db "$DB" --no-build --resume --only attn_decode --budget-min "${KT_ATTN_BUDGET_MIN:-3}" || return 1
    fi
    if [ "${KT_ATTN_SHAPES_MIN:-3}" != 0 ]; then
        ./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db "$DB" --no-build --resume --only attn_decode \
            --shapes "${KT_ATTN_SHAPES:-tests/device/attn_shapes.json}" --budget-min "${KT_ATTN_SHAPES_MIN:-3}"
    fi
}
run_attn_check() {
    PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --db "$DB" --check-only --dtype bf16,fp16,bf16_e4m3 \
        --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5 --ctx 100,1500 --window 0,64 --softcap 0,30 --sinks 0,1 &&
    PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --db "$DB" --check-only --dtype bf16,fp16_e4m3 \
        --d 64,256,512 --g 8 --hkv 2 --q 1,4 --batch 3 --ctx 777,5000 &&
    PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --db "$DB" --check-only --bs 64 --dtype bf16,fp16_e4m3 \
        --d 128,256 --g 8 --hkv 2 --q 1,8 --batch 4,9 --ctx 3000,40000 &&
    # segment counts from the scratch ceiling down (batch 1 and one kv head: the law asks for more
    # than 128; batch 3 and 24: fewer), and graphs replayed after seq_lens is rewritten in place
    PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --db "$DB" --check-only --replay-lengths --dtype bf16,bf16_e4m3 \
        --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24 --ctx 40000 --lens mixed
}
# The issue's timing grid (geometries q heads / kv heads / head size), each run its own table; with
# KT_ATTN_ARGS one run of those arguments instead.
run_attn_bench() {
    if [ -n "${KT_ATTN_ARGS:-}" ]; then
        # shellcheck disable=SC2086
        PYTHONUNBUFFERED=1 OUT="$RES" python3 tests/device/bench_attn.py --db "$DB" --lens equal $KT_ATTN_ARGS
        return
    fi
    rc=0
    for run in "16-2-256:--dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 1,8,32 --ctx 4096,32768" \
               "6-1-256:--dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1,8 --ctx 32768,131072" \
               "32-8-128:--dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 8,32 --ctx 32768" \
               "8-4-256:--dtype bf16 --d 256 --g 2 --hkv 4 --q 1 --batch 8 --ctx 32768" \
               "window:--dtype bf16 --d 256 --g 8 --hkv 2 --q 1 --batch 8 --ctx 131072 --window 4096"; do
        tag=${run%%:*}
        echo "== bench_attn $tag: ${run#*:}"
        # shellcheck disable=SC2086
        PYTHONUNBUFFERED=1 OUT="$RES" python3 tests/device/bench_attn.py --db "$DB" --lens equal \
            --tsv "bench_attn-$tag.tsv" ${run#*:} || rc=1
    done
    # the issue's ratio bars (q 4 and q 8 against q 1, fp8 against bf16, the window against 4K),
    # each ratio taken within a round
    echo "== ratio_attn: the ratio bars paired a round"
    PYTHONUNBUFFERED=1 python3 tests/device/ratio_attn.py --db "$DB" --rounds 41 \
        --row q1=bf16,256,8,2,1,8,32768 --row q4=bf16,256,8,2,4,8,32768 --row q8=bf16,256,8,2,8,8,32768 \
        --row f256=bf16_e4m3,256,8,2,1,8,32768 --row b128=bf16,128,4,8,1,8,32768 \
        --row f128=bf16_e4m3,128,4,8,1,8,32768 --row c4k=bf16,256,8,2,1,8,4096 \
        --row w128k=bf16,256,8,2,1,8,131072,4096 \
        --ratio q4/q1 --ratio q8/q1 --ratio q1/f256 --ratio b128/f128 --ratio w128k/c4k || rc=1
    return $rc
}
# attn_prefill: a sweep over tests/device/attn_prefill_shapes.json, which verifies every candidate
# against the float64 CPU reference at those shapes before it times them
# (KT_PREFILL_SHAPES: the files to sweep in turn, default that one; the bench grid's own shapes are
# tests/device/attn_prefill_grid.json)
run_attn_prefill() {
    need "$DB" "no database to tune into" || return 1
    for f in ${KT_PREFILL_SHAPES:-tests/device/attn_prefill_shapes.json}; do
        ./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db "$DB" --no-build --resume --only attn_prefill \
            --shapes "$f" --budget-min "${KT_PREFILL_MIN:-2}" || return 1
    done
}
# "attn" is the three in turn; each can be asked for alone
case ",$STEPS," in *",attn,"*) STEPS="$STEPS,attnsweep,attncheck,attnbench" ;; esac
step attnsweep attn-sweep.log run_attn_sweep
step attncheck attn-check.log run_attn_check
step attnbench attn.log run_attn_bench
step prefill prefill-sweep.log run_attn_prefill
run_prefill_bench() {
    # shellcheck disable=SC2086
    PYTHONUNBUFFERED=1 OUT="$RES" python3 tests/device/bench_prefill.py --db "$DB" ${KT_PREFILL_ARGS:-}
}
step prefillbench prefill.log run_prefill_bench
run_gdn_sweep() {
    need "$DB" "no database to tune into" || return 1
    ./tune --modelpath models/qwen3-next-80b-a3b --tp 4 --target sm_90a --db "$DB" --no-build --resume \
        --only gdn_decode --budget-min "${KT_GDN_MIN:-4}"
}
run_gdn_check() { PYTHONUNBUFFERED=1 python3 tests/device/gdn_check.py --db "$DB"; }
run_gdn_bench() {
    # shellcheck disable=SC2086
    PYTHONUNBUFFERED=1 OUT="$RES" python3 tests/device/bench_gdn.py --db "$DB" ${KT_GDN_ARGS:-}
}
case ",$STEPS," in *",gdn,"*) STEPS="$STEPS,gdnsweep,gdncheck,gdnbench" ;; esac
step gdnsweep gdn-sweep.log run_gdn_sweep
step gdncheck gdn-check.log run_gdn_check
step gdnbench gdn.log run_gdn_bench

# The tuned database comes back (compressed) when a sweep ran and $OUT is the device tool's.
case ",$STEPS," in
    *",sweep,"*|*",attnsweep,"*|*",prefill,"*|*",gdnsweep,"*)
        if [ -n "${OUT:-}" ] && [ "${KT_RETURN_DB:-1}" != 0 ] && [ -f "$DB" ]; then
            sh tests/device/return_db.sh "$DB" "$RES" || echo "run_all: the database was not returned"
        fi ;;
esac

# the device tool returns at most 8 files: every log and table in one
if [ -n "${OUT:-}" ] && [ "$RES" = "$OUT" ]; then
    files=$(ls "$RES" | grep -v -e '^ktune' -e '^results.tgz$' || true)
    # shellcheck disable=SC2086 # one name a line, none with spaces (the steps name them)
    [ -n "$files" ] && tar czf "$RES/results.tgz" -C "$RES" $files && (cd "$RES" && rm -f $files)
fi

echo
echo "run_all summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)):"
printf '%-6s %-5s %8s\n' step status time
cat "$SUMMARY"
rm -f "$SUMMARY"
[ -d "$RES" ] && echo "logs: $RES ($(ls "$RES" | wc -l) files)"
exit $FAILED
