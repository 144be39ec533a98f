# env.sh: sourced by a device call's script (`. tests/device/env.sh`, from the repository root on
# the GPU machine): the carried luajit and shared libraries first on the paths (./tune runs on
# them), Python unbuffered (a log read after a timeout holds every line), t0 and el (seconds since
# the script started, for each step's echo).
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s) - t0 )) s"; }

# call_begin NAME: a call's results folder R=$OUT/NAME, its scratch W (removed by call_end) and
# the runtime L; call_end NAME: R packed into $OUT/NAME.tgz (what comes back), the step's time.
call_begin() {
    R=$OUT/$1
    mkdir -p "$R"
    W=$(mktemp -d)
    L=out/lib/libktrt.so
}
call_end() {
    rm -rf "$W"
    tar czf "$OUT/$1.tgz" -C "$OUT" "$1" && rm -rf "$R"
    echo "done $(el)"
}

# The GDN calls' repeated steps (after call_begin). unpack NAME: out/NAME/gdn_all.ktdb.xz to
# $W/NAME.ktdb. decode_check NAME: gdn_check.py on it (log $R/check-NAME.log, its verdict echoed);
# prefill_check NAME: gdn_prefill_check.py the same way (log $R/prefill-check-NAME.log).
# prefill_ab A B ROWS: bench_gdn_prefill.py on $W/A.ktdb against $W/B.ktdb in the same rounds with
# each launch's time (log $R/ab-A-B.log, its rows and kernels echoed).
unpack() {
    xz -dc "out/$1/gdn_all.ktdb.xz" > "$W/$1.ktdb"
}
decode_check() {
    timeout 60 python3 tests/device/gdn_check.py --lib "$L" --db "$W/$1.ktdb" > "$R/check-$1.log" 2>&1
    echo "decode check ($1) rc=$? $(el)"
    grep -E "gdn_check:|WRONG|FAIL|fail" "$R/check-$1.log" | head -4 | cut -c1-200
}
prefill_check() {
    timeout 45 python3 tests/device/gdn_prefill_check.py --lib "$L" --db "$W/$1.ktdb" > "$R/prefill-check-$1.log" 2>&1
    echo "prefill check ($1) rc=$? $(el)"
    grep -E "gdn_prefill_check:|FAIL|WRONG" "$R/prefill-check-$1.log" | head -4 | cut -c1-200
}
prefill_ab() {
    f="$R/ab-$1-$2.log"
    timeout 100 python3 tests/device/bench_gdn_prefill.py --lib "$L" --db "$W/$1.ktdb" --ab "$W/$2.ktdb" --profile \
        --rounds 7 --rows "$3" > "$f" 2>&1
    echo "$1 / $2 $3 rc=$? $(el)"
    grep -E "^[0-9]+x|--ab" "$f" | cut -c1-110
    grep -E "kernel" "$f" | sed 's/kt_gdn_prefill_[a-z0-9]*_vk[01]_dk[0-9]*_dv[0-9]*_//' | cut -c1-90
}

# The sweep calls' repeated steps. db_unpack FILE.xz: DB=$W/q.ktdb, the carried database unpacked
# there. model_sweep LOG TIMEOUT TUNE-ARGS...: ./tune on $DB with the
# arguments (model, tp, --only, --budget-min ...), stopped by SIGINT at TIMEOUT seconds (what it
# measured is kept), its log $R/LOG and its summary lines echoed. db_return: `kt dump` of $DB
# ($R/dump.txt.gz) and the database itself back under $OUT (tests/device/return_db.sh).
db_unpack() {
    DB=$W/q.ktdb
    xz -dc "$1" > "$DB"
}
model_sweep() {
    log=$1 limit=$2
    shift 2
    timeout -s INT "$limit" ./tune --target sm_90a --db "$DB" --no-build "$@" > "$R/$log" 2>&1
    echo "$log rc=$? $(el)"
    grep -E "^sweep|^coverage" "$R/$log" | cut -c1-200
}
# qwen3_tp4_sweep: the sweep (Qwen3-Next-80B-A3B, tp 4, resumed) on $DB where the card is
# an H200 (its timings are the H200's to take), else nothing; ONLY, BUDGET and SWEEP_TIMEOUT as
# model_sweep's; the database returned after.
qwen3_tp4_sweep() {
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    echo "gpu: $gpu"
    case "$gpu" in
    *H200*)
        model_sweep sweep.log ${SWEEP_TIMEOUT:-530} --modelpath models/qwen3-next-80b-a3b --tp 4 --resume \
            --budget-min ${BUDGET:-7.8} ${ONLY:+--only $ONLY}
        grep -E "refused|wrong|failed" $R/sweep.log | head -8 | cut -c1-200
        db_return ;;
    *) echo "not an H200: no sweep" ;;
    esac
}
db_return() {
    out/bin/kt dump --db "$DB" > "$R/dump.txt" 2>&1
    echo "dump rc=$? $(el)"
    gzip "$R/dump.txt"
    sh tests/device/return_db.sh "$DB" "$OUT"
}
