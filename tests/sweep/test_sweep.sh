#!/bin/sh
# test_sweep.sh: `tune --modelpath --tp` end to end without a GPU.
#  - no device: law selections for every problem, said in the output and in the database
#  - a scripted worker (fake_worker.sh, through KT_WORKER_EXE and KT_SWEEP_FAKE_DEVICE) stands for
#    the GPU: a variant that crashes its worker, one that hangs it, and one that is wrong are
#    recorded as such and never selected; every problem still gets a measured selection
#  - kill -9 mid-sweep, then --resume: nothing measured twice, everything measured once
#  - a --budget-min stop: the law's pick stored for what was not reached, never over a measured one
#  - a second sweep over a finished database measures nothing (keyed by code hash)
#  - --gpus 2 runs two workers over one sweep and selects what one worker selects
#  - a finalist set timed before is decided from that pass's medians, not the newest timings
#  - bad input (unknown model field, tp that does not divide, corrupt database) is refused
#    (that tune refuses a bad model before building anything: tests/unit/test_tune_refuse.sh)
# Uses the compile phase's database (out/test/dense.ktdb) when there is one, else builds gfx1201.
set -u
cd "$(dirname "$0")/../.."
unset KT_GDN_STATE   # the model problems' default GDN state layout, whatever the shell exported
DIR=${KT_TEST_DIR:-out/test}/sweep
mkdir -p "$DIR"
SRC=${KT_TEST_DIR:-out/test}/dense.ktdb
if [ ! -s "$SRC" ]; then
    SRC=$DIR/src.ktdb
    out/bin/kt gen --recipe templates/gemm/dense.lua --target gfx1201 --db "$SRC" --quiet > /dev/null || exit 1
fi
checks=0; failed=0
check() {
    name=$1; shift
    checks=$((checks + 1))
    if "$@" > "$DIR/check.out" 2>&1; then echo "  pass  $name"
    else failed=$((failed + 1)); echo "  FAIL  $name"; sed 's/^/        /' "$DIR/check.out" | tail -25; fi
}
fresh() { rm -f "$1" "$1-wal" "$1-shm"; cp "$SRC" "$1"; }
MODEL=models/qwen3-8b
export KT_SWEEP_FAKE_DEVICE="gfx1201 64 0x7550" FAKE_KEY="gfx1201/64/0x7550"
export KT_WORKER_EXE=tests/sweep/fake_worker.sh
# the sweep machinery on the GEMM's 56 problems; the second family's own check is below
tune() { ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build --only gemm "$@"; }
q() { sqlite3 "$1" "$2"; }

no_device() {
    fresh "$DIR/law.ktdb"
    env -u KT_SWEEP_FAKE_DEVICE ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build --no-device --only gemm \
        --db "$DIR/law.ktdb" > "$DIR/law.txt" 2>&1 || return 1
    grep "NO GPU" "$DIR/law.txt" && grep "coverage: 56 problems: 0 exact, 0 bucket, 56 law, 0 refused" "$DIR/law.txt" &&
    [ "$(q "$DIR/law.ktdb" "SELECT count(*) FROM selection WHERE source='law' AND device_key='gfx1201/law'")" = 56 ] &&
    [ "$(q "$DIR/law.ktdb" "SELECT mode FROM run")" = law ] &&
    q "$DIR/law.ktdb" "SELECT note FROM run" | grep "not measured"
}
check "no device: 56 law selections, said in the output and the run" no_device

# A hybrid model: the full-attention layers' projections (12 of 48 layers, q_proj with its gate: n =
# (2*4 + 2*1) * 256 at tp 4), the GDN layers' (in_proj_qkvz, in_proj_ba; out_proj has o_proj's shape),
# every layer's router and shared expert: 7 shapes x 14 M buckets; GDN prefill, the routed experts,
# the shared expert's gate and the (1 + weight) norms are refused by name.
hybrid() {
    fresh "$DIR/hybrid.ktdb"
    env -u KT_SWEEP_FAKE_DEVICE ./tune --modelpath models/qwen3-next-80b-a3b --tp 4 --target gfx1201 --no-build \
        --no-device --only gemm --db "$DIR/hybrid.ktdb" > "$DIR/hybrid.txt" 2>&1 || return 1
    grep "gemm bf16 n=2560 k=2048 m<=1 .* qkv " "$DIR/hybrid.txt" &&
    grep "gemm bf16 n=2048 k=1024 m<=1 .* o,gdn.out_proj " "$DIR/hybrid.txt" &&
    grep "gemm bf16 n=3072 k=2048 m<=1 .* gdn.in_proj_qkvz " "$DIR/hybrid.txt" &&
    grep "gemm bf16 n=16 k=2048 m<=1 .* gdn.in_proj_ba " "$DIR/hybrid.txt" &&
    grep "gemm bf16 n=512 k=2048 m<=1 .* moe.router " "$DIR/hybrid.txt" &&
    grep "gemm bf16 n=256 k=2048 m<=1 .* shared_expert.gate_up " "$DIR/hybrid.txt" &&
    grep "gemm bf16 n=2048 k=128 m<=1 .* shared_expert.down " "$DIR/hybrid.txt" &&
    grep "(not derived) x48/forward .* moe.experts .*path=refused" "$DIR/hybrid.txt" &&
    grep "(not derived) x48/forward .* moe.shared_expert_gate .*path=refused" "$DIR/hybrid.txt" &&
    grep "(not derived) x96/forward .* norms .*path=refused" "$DIR/hybrid.txt" &&
    grep "coverage: 98 problems: 0 exact, 0 bucket, 98 law, 0 refused; 3 layer groups not derived" "$DIR/hybrid.txt"
}
check "hybrid model: the derivable GEMMs, the rest refused with its layers and reason" hybrid

# ... and its GDN layers: the decode step's 40 problems (4 token x 10 batch buckets) and the
# prefill's 35 (5 token buckets to 16K x 7 sequence buckets), each served by the law, none refused.
# The kernels are the compile phase's (gfx1201: gdn_decode whole, gdn_prefill's BT 64 forms), built
# here when that phase has not run.
hybrid_gdn() {
    fresh "$DIR/hybrid_gdn.ktdb"
    # the model's problems take vLLM's K-last state (KT_GDN_STATE's default): the compile phase's
    # database holds the [.., K, V] prefill forms only, so the K-last ones the law needs are built
    if [ "$(q "$DIR/hybrid_gdn.ktdb" "SELECT count(*) FROM kernel WHERE ops='gdn_prefill' AND status='ok' AND name LIKE '%_vk1_%'")" = 0 ]; then
        sed 's/{ "dtype", { "bf16", "fp16" } }/{ "dtype", { "bf16" } }/; s/{ "BT", { 16, 32, 64 } }/{ "BT", { 64 } }/; s/{ "VK", { 0, 1 } }/{ "VK", { 1 } }/; s/{ "BV", { 16, 32, 64 } }/{ "BV", { 16 } }/' \
            templates/gdn/prefill.lua > templates/gdn/_sweep_prefill.lua
        out/bin/kt gen --recipe templates/gdn/decode.lua --target gfx1201 --db "$DIR/hybrid_gdn.ktdb" --quiet > /dev/null &&
        out/bin/kt gen --recipe templates/gdn/_sweep_prefill.lua --target gfx1201 --db "$DIR/hybrid_gdn.ktdb" --quiet > /dev/null
        rc=$?; rm -f templates/gdn/_sweep_prefill.lua; [ $rc = 0 ] || return 1
    fi
    env -u KT_SWEEP_FAKE_DEVICE ./tune --modelpath models/qwen3-next-80b-a3b --tp 4 --target gfx1201 --no-build \
        --no-device --only gdn_decode,gdn_prefill --db "$DIR/hybrid_gdn.ktdb" > "$DIR/hybrid_gdn.txt" 2>&1 || return 1
    grep "gdn_decode bf16 dk=128 dv=128 hk=4 hv=8 kw=4 norm=1 vk=1 q<=1 batch<=1 .* gdn .*path=law" "$DIR/hybrid_gdn.txt" &&
    grep "gdn_prefill bf16 dk=128 dv=128 hk=4 hv=8 kw=4 norm=1 vk=1 tokens<=16384 seqs<=1 .* gdn .*path=law" "$DIR/hybrid_gdn.txt" &&
    ! grep -q "gdn_prefill bf16 .*tokens<=65536" "$DIR/hybrid_gdn.txt" &&
    grep "coverage: 75 problems: 0 exact, 0 bucket, 75 law, 0 refused" "$DIR/hybrid_gdn.txt"
}
check "hybrid model: its GDN decode and prefill problems, each served by the law" hybrid_gdn

faults() {
    fresh "$DIR/faults.ktdb"
    KT_WORKER_TIMEOUT_S=2 FAKE_CRASH=bm16_bn32_bk32_wm1_wn1_sk8 FAKE_HANG=bm16_bn64_bk32_wm1_wn1_sk8 \
        FAKE_WRONG=bm16_bn32_bk32_wm1_wn1_sk4 tune --db "$DIR/faults.ktdb" > "$DIR/faults.txt" 2>&1 || return 1
    q "$DIR/faults.ktdb" "SELECT kernel, status, detail FROM measurement WHERE kind='verify' AND status != 'ok'"
    [ "$(q "$DIR/faults.ktdb" "SELECT count(*) FROM measurement WHERE status='crash' AND kernel LIKE '%bm16_bn32_bk32_wm1_wn1_sk8'")" = 4 ] &&
    [ "$(q "$DIR/faults.ktdb" "SELECT count(*) FROM measurement WHERE status='timeout' AND kernel LIKE '%bm16_bn64_bk32_wm1_wn1_sk8'")" = 4 ] &&
    [ "$(q "$DIR/faults.ktdb" "SELECT count(*) FROM measurement WHERE status='wrong'")" = 4 ] &&
    [ "$(q "$DIR/faults.ktdb" "SELECT count(*) FROM selection WHERE source='measured'")" = 56 ] &&
    [ "$(q "$DIR/faults.ktdb" "SELECT count(*) FROM selection s JOIN measurement m ON m.code_hash = s.code_hash AND
          m.problem_key = s.problem_key AND m.kind = 'verify' AND m.status != 'ok'")" = 0 ] &&
    # the law's regret is measured wherever the law's pick itself passed verification
    [ "$(q "$DIR/faults.ktdb" "SELECT count(*) FROM selection s WHERE regret IS NULL AND NOT EXISTS (SELECT 1 FROM
          measurement m WHERE m.kernel = s.law_kernel AND m.problem_key = s.problem_key AND m.status != 'ok')")" = 0 ]
}
check "crash, hang and wrong variants recorded, never selected; 56 measured selections" faults

crash_lines() {
    # a real worker says `verified <hash> crash ...` before it exits 3: that exit is the variant's
    # crash (recorded once, with the worker's detail), not a death outside verification
    fresh "$DIR/crashline.ktdb"
    FAKE_CRASH_LINE="bm16_bn32_bk32_wm1_wn1_sk8 bm16_bn64_bk32_wm1_wn1_sk8" tune --db "$DIR/crashline.ktdb" \
        > "$DIR/crashline.txt" 2>&1 || return 1
    grep "problems measured" "$DIR/crashline.txt"
    q "$DIR/crashline.ktdb" "SELECT kernel, status, detail FROM measurement WHERE kind='verify' AND status != 'ok'"
    [ "$(q "$DIR/crashline.ktdb" "SELECT count(*) FROM measurement WHERE kind='verify' AND status='crash' AND
          detail = 'illegal address (fake)' AND (kernel LIKE '%bm16_bn32_bk32_wm1_wn1_sk8' OR kernel LIKE '%bm16_bn64_bk32_wm1_wn1_sk8')")" = 8 ] &&
    [ "$(q "$DIR/crashline.ktdb" "SELECT count(*) FROM measurement WHERE kind='verify' AND status != 'ok'")" = 8 ] &&
    [ "$(q "$DIR/crashline.ktdb" "SELECT count(*) FROM selection WHERE source='measured'")" = 56 ] &&
    ! grep -q "FAILED" "$DIR/crashline.txt"
}
check "two variants that report crash and exit: each their crash, every problem measured" crash_lines

kill_resume() {
    fresh "$DIR/resume.ktdb"
    # ./tune execs luajit, so $! is the sweep itself
    FAKE_SLEEP=0.3 ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build --only gemm --db "$DIR/resume.ktdb" \
        > "$DIR/resume1.txt" 2>&1 &
    pid=$!
    sleep 4
    # a second sweep of the same database while the first runs is refused
    if tune --db "$DIR/resume.ktdb" > "$DIR/concurrent.txt" 2>&1; then echo "concurrent sweep ran"; return 1; fi
    grep "another tune is sweeping" "$DIR/concurrent.txt" || return 1
    kill -9 $pid; wait $pid 2>/dev/null
    sleep 1   # the orphaned worker sees its stdin close and exits
    before=$(q "$DIR/resume.ktdb" "SELECT count(*) FROM pass")
    echo "passes committed before kill -9: $before"
    [ "$before" -gt 0 ] || return 1
    tune --db "$DIR/resume.ktdb" --resume > "$DIR/resume2.txt" 2>&1 || return 1
    grep "run 1 (resumed)" "$DIR/resume2.txt" || return 1
    [ "$(q "$DIR/resume.ktdb" "SELECT count(*) FROM (SELECT problem_key, kind, count(*) c FROM pass GROUP BY 1, 2 HAVING c > 1)")" = 0 ] &&
    [ "$(q "$DIR/resume.ktdb" "SELECT count(*) FROM selection WHERE source='measured'")" = 56 ] &&
    [ "$(q "$DIR/resume.ktdb" "SELECT status FROM run")" = done ]
}
check "kill -9 mid-sweep, --resume: nothing measured twice, all 56 selected; concurrent sweep refused" kill_resume

budget_law() {
    # a budget that stops the sweep early: what it did not reach gets the law's pick for this device
    # (so libktrt serves it and sizes its workspaces for it), a later sweep measures over those
    # picks, and a stopped sweep never replaces a measured selection
    fresh "$DIR/budget.ktdb"
    FAKE_SLEEP=0.2 tune --db "$DIR/budget.ktdb" --budget-min 0.01 > "$DIR/budget1.txt" 2>&1 || return 1
    grep "not reached" "$DIR/budget1.txt" || return 1
    m=$(q "$DIR/budget.ktdb" "SELECT count(*) FROM selection WHERE source='measured'")
    l=$(q "$DIR/budget.ktdb" "SELECT count(*) FROM selection WHERE source='law' AND decided_by='law (not reached)'")
    echo "stopped sweep: $m measured, $l law (not reached)"
    [ "$m" -ge 1 ] && [ "$l" -ge 1 ] && [ $((m + l)) = 56 ] || return 1
    tune --db "$DIR/budget.ktdb" > "$DIR/budget2.txt" 2>&1 || return 1
    [ "$(q "$DIR/budget.ktdb" "SELECT count(*) FROM selection WHERE source='measured'")" = 56 ] || return 1
    tune --db "$DIR/budget.ktdb" --budget-min 0.0001 > "$DIR/budget3.txt" 2>&1 || return 1
    grep "problems measured" "$DIR/budget3.txt"
    [ "$(q "$DIR/budget.ktdb" "SELECT count(*) FROM selection WHERE source='measured'")" = 56 ]
}
check "a budget-stopped sweep: the law's pick for what it did not reach, never over a measured selection" budget_law

nothing_new() {
    before=$(q "$DIR/faults.ktdb" "SELECT count(*) FROM pass")
    KT_WORKER_TIMEOUT_S=2 tune --db "$DIR/faults.ktdb" > "$DIR/again.txt" 2>&1 || return 1
    after=$(q "$DIR/faults.ktdb" "SELECT count(*) FROM pass")
    echo "passes before $before, after $after"
    [ "$before" = "$after" ]
}
check "a second sweep measures nothing (measurements keyed by code hash)" nothing_new

finalists_return() {
    # The gpus1 database (one finished sweep): the most selected kernel leaves the database, so
    # problems that had it as a finalist are timed again with other members (the law's pick among
    # them), then it comes back and their finalists are the first sweep's again. The decision must
    # come from the first fine pass's own medians, not from the newest timing of each code object.
    db=$DIR/back.ktdb
    rm -f "$db" "$db-wal" "$db-shm"; cp "$DIR/gpus1.ktdb" "$db"
    q "$db" "SELECT problem_key, kernel, regret IS NULL FROM selection ORDER BY 1" > "$DIR/back0.txt"
    k=$(q "$db" "SELECT kernel FROM selection GROUP BY kernel ORDER BY count(*) DESC, kernel LIMIT 1")
    q "$db" "CREATE TABLE held AS SELECT * FROM kernel WHERE name = '$k'; DELETE FROM kernel WHERE name = '$k'"
    tune --db "$db" > "$DIR/back1.txt" 2>&1 || return 1
    q "$db" "INSERT INTO kernel SELECT * FROM held; DROP TABLE held"
    before=$(q "$db" "SELECT count(*) FROM pass")
    tune --db "$db" > "$DIR/back2.txt" 2>&1 || return 1
    q "$db" "SELECT problem_key, kernel, regret IS NULL FROM selection ORDER BY 1" > "$DIR/back3.txt"
    echo "kernel held out: $k; passes before the last sweep $before, after $(q "$db" "SELECT count(*) FROM pass")"
    grep "problems measured" "$DIR/back2.txt"
    grep -q "56 problems measured, 0 failed" "$DIR/back2.txt" && diff "$DIR/back0.txt" "$DIR/back3.txt" &&
        [ "$before" = "$(q "$db" "SELECT count(*) FROM pass")" ]
}

two_gpus() {
    fresh "$DIR/gpus2.ktdb"
    rm -f "$DIR/gpus2.log"
    FAKE_LOG="$DIR/gpus2.log" tune --db "$DIR/gpus2.ktdb" --gpus 2 > "$DIR/gpus2.txt" 2>&1 || return 1
    echo "problems per worker:"; cut -d' ' -f2 "$DIR/gpus2.log" | sort | uniq -c
    grep -q "^gpu 0 " "$DIR/gpus2.log" && grep -q "^gpu 1 " "$DIR/gpus2.log" || return 1
    fresh "$DIR/gpus1.ktdb"
    tune --db "$DIR/gpus1.ktdb" > "$DIR/gpus1.txt" 2>&1 || return 1
    q "$DIR/gpus1.ktdb" "SELECT problem_key, kernel FROM selection ORDER BY 1" > "$DIR/sel1.txt"
    q "$DIR/gpus2.ktdb" "SELECT problem_key, kernel FROM selection ORDER BY 1" > "$DIR/sel2.txt"
    diff "$DIR/sel1.txt" "$DIR/sel2.txt" && [ "$(wc -l < "$DIR/sel1.txt")" = 56 ]
}
check "--gpus 2: one worker per GPU, same selections as one GPU" two_gpus
check "finalists that return decide from their own fine pass (selections and regrets as before)" finalists_return

refusals() {
    ok=0
    if tune --db "$DIR/x.ktdb" --tp 3 > "$DIR/r1.txt" 2>&1; then ok=1; fi
    cat "$DIR/r1.txt"
    printf 'this is not a database, just bytes that are long enough to look like a header ........' > "$DIR/corrupt.ktdb"
    if tune --db "$DIR/corrupt.ktdb" > "$DIR/r2.txt" 2>&1; then ok=1; fi
    cat "$DIR/r2.txt"
    printf '{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096}' > "$DIR/config.json"
    if ./tune --modelpath "$DIR/config.json" --tp 1 --target gfx1201 --no-build --db "$DIR/y.ktdb" > "$DIR/r3.txt" 2>&1; then ok=1; fi
    cat "$DIR/r3.txt"
    [ $ok = 0 ] && grep -q "tp" "$DIR/r1.txt" && grep -qi "not a ktune database\|corrupt\|not a database" "$DIR/r2.txt" &&
        grep -q "config.json: torch_dtype: missing" "$DIR/r3.txt"
}
check "bad tp, corrupt database, config missing a field: refused with a message" refusals

# The second family through the same sweep, worker protocol, selection chain and kt explain, with
# nothing of its own in them: the model's fused add + RMSNorm problems (hidden static, rows
# bucketed) are derived by its descriptor, swept by the scripted worker, selected, and served.
rmsnorm_family() {
    fresh "$DIR/rms.ktdb"
    if [ "$(q "$DIR/rms.ktdb" "SELECT count(*) FROM kernel WHERE ops = 'rmsnorm_add' AND target = 'gfx1201' AND status = 'ok'")" = 0 ]; then
        out/bin/kt gen --recipe templates/norm/rmsnorm_add.lua --target gfx1201 --db "$DIR/rms.ktdb" --quiet > /dev/null || return 1
    fi
    ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build --only rmsnorm_add --db "$DIR/rms.ktdb" \
        > "$DIR/rms.txt" 2>&1 || { tail -20 "$DIR/rms.txt"; return 1; }
    grep "rmsnorm_add 1 shape x 14 buckets = 14" "$DIR/rms.txt" &&
    grep "coverage: 14 problems: 14 exact, 0 bucket, 0 law, 0 refused" "$DIR/rms.txt" &&
    grep "^law regret (rmsnorm_add): median .*, worst .*, [0-9]* of 14 within 15%" "$DIR/rms.txt" &&
    [ "$(q "$DIR/rms.ktdb" "SELECT count(*) FROM selection WHERE op = 'rmsnorm_add' AND source = 'measured' AND
          problem_key LIKE 'rmsnorm_add bf16 hidden=4096 rows<=%'")" = 14 ] &&
    [ "$(q "$DIR/rms.ktdb" "SELECT count(*) FROM selection WHERE op != 'rmsnorm_add'")" = 0 ] &&
    out/bin/kt explain --db "$DIR/rms.ktdb" --op rmsnorm_add --dtype bf16 --hidden 4096 --rows 100 > "$DIR/rms-explain.txt" &&
    grep "problem: rmsnorm_add bf16 hidden=4096 rows<=128 (rows=100)" "$DIR/rms-explain.txt" &&
    grep "path=exact" "$DIR/rms-explain.txt" && grep "kernel: kt_rmsnorm_add_bf16_" "$DIR/rms-explain.txt" &&
    out/bin/kt explain --db "$DIR/rms.ktdb" --op rmsnorm_add --dtype bf16 --hidden 5120 --rows 3 > "$DIR/rms-law.txt" &&
    grep "path=law" "$DIR/rms-law.txt" && out/bin/kt dump --db "$DIR/rms.ktdb" | grep -q "op=rmsnorm_add dtype=bf16 hidden=4096 rows=64 phase=decode"
}
check "a second family (rmsnorm_add): derived, swept, selected, explained, through the same code" rmsnorm_family

# A bucketed dimension in a --shapes entry is its limit: the edges up to the one serving it are swept
# (rows 100: 1 .. 128), no others; a limit below 1 is refused naming the dimension.
shapes_limit() {
    fresh "$DIR/limit.ktdb"
    printf '[{"op": "rmsnorm_add", "hidden": 2048, "rows": 100}]' > "$DIR/limit.json"
    ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build --no-device --shapes "$DIR/limit.json" \
        --db "$DIR/limit.ktdb" > "$DIR/limit.txt" 2>&1 || { tail -20 "$DIR/limit.txt"; return 1; }
    grep "rmsnorm_add 1 shape x 8 buckets = 8" "$DIR/limit.txt" &&
    [ "$(q "$DIR/limit.ktdb" "SELECT count(*) FROM problem WHERE key LIKE 'rmsnorm_add bf16 hidden=2048 rows<=%'")" = 8 ] &&
    [ "$(q "$DIR/limit.ktdb" "SELECT count(*) FROM problem WHERE key = 'rmsnorm_add bf16 hidden=2048 rows<=128'")" = 1 ] &&
    [ "$(q "$DIR/limit.ktdb" "SELECT count(*) FROM problem WHERE key = 'rmsnorm_add bf16 hidden=2048 rows<=256'")" = 0 ] &&
    printf '[{"op": "rmsnorm_add", "hidden": 2048, "rows": 0}]' > "$DIR/limit0.json" &&
    ! ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build --no-device --shapes "$DIR/limit0.json" \
        --db "$DIR/limit.ktdb" > "$DIR/limit0.txt" 2>&1 &&
    grep "entry 0: rmsnorm_add needs a positive integer \"rows\" (a limit of its buckets), \[lo, hi\], or none" "$DIR/limit0.txt" &&
    # two shapes with different bucket counts: the problem line gives only the totals
    printf '[{"op": "rmsnorm_add", "hidden": 2048, "rows": 100}, {"op": "rmsnorm_add", "hidden": 4096}]' > "$DIR/limit2.json" &&
    fresh "$DIR/limit.ktdb" &&
    ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build --no-device --shapes "$DIR/limit2.json" \
        --db "$DIR/limit.ktdb" > "$DIR/limit2.txt" 2>&1 &&
    grep "rmsnorm_add 2 shapes, 22 problems;" "$DIR/limit2.txt" &&
    # [lo, hi]: the edges from lo's to hi's (rows 20 .. 100: 32, 64, 128); hi below lo refused
    printf '[{"op": "rmsnorm_add", "hidden": 2048, "rows": [20, 100]}]' > "$DIR/range.json" &&
    fresh "$DIR/limit.ktdb" &&
    ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build --no-device --shapes "$DIR/range.json" \
        --db "$DIR/limit.ktdb" > "$DIR/range.txt" 2>&1 &&
    grep "rmsnorm_add 1 shape x 3 buckets = 3" "$DIR/range.txt" &&
    [ "$(q "$DIR/limit.ktdb" "SELECT count(*) FROM problem WHERE key = 'rmsnorm_add bf16 hidden=2048 rows<=32'")" = 1 ] &&
    [ "$(q "$DIR/limit.ktdb" "SELECT count(*) FROM problem WHERE key = 'rmsnorm_add bf16 hidden=2048 rows<=16'")" = 0 ] &&
    printf '[{"op": "rmsnorm_add", "hidden": 2048, "rows": [100, 20]}]' > "$DIR/range-bad.json" &&
    ! ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build --no-device --shapes "$DIR/range-bad.json" \
        --db "$DIR/limit.ktdb" > "$DIR/range-bad.txt" 2>&1 &&
    grep 'entry 0: rmsnorm_add "rows": \[lo, hi\] needs two integers 1 <= lo <= hi' "$DIR/range-bad.txt"
}
check "a --shapes entry's bucketed dimension limits its buckets (rows 100: 1 .. 128; [20, 100]: 32 .. 128)" shapes_limit

# A tie on a problem's own instance is timed again on its op's second instance (attention: every
# sequence at the bucket's length) and decided there: the tiebreak's pass and timings are stored
# under the second instance's key (" @equal"), the selection says so and keeps its own instance's
# time. The scripted worker ties every decode_ws kernel at 5.00 us and parts them at @equal.
second_instance() {
    db=$DIR/tie.ktdb
    fresh "$db"
    out/bin/kt gen --recipe templates/attn/decode_ws.lua --target gfx1201 --db "$db" --sample 12 --quiet > /dev/null || return 1
    dt=$(q "$db" "SELECT json_extract(params, '$.dtype') || ' ' || json_extract(params, '$.D') FROM kernel
                  WHERE template = 'attn/decode_ws.hip' AND target = 'gfx1201' AND status = 'ok'
                  GROUP BY 1 HAVING count(*) >= 2 ORDER BY count(*) DESC LIMIT 1")
    [ -n "$dt" ] || { echo "no dtype and head size with two ok decode_ws kernels"; return 1; }
    set -- $dt
    printf '[{"op": "attn_decode", "dtype": "%s", "d": %s, "g": 4, "hkv": 2, "bs": 16, "win": 0, "cap": 0, "sink": 0, "q": 1, "batch": 1, "ctx": 4096}]' \
        "$1" "$2" > "$DIR/tie.json"
    FAKE_TIE=kt_attn_decode_ws ./tune --modelpath "$MODEL" --tp 4 --target gfx1201 --no-build \
        --only attn_decode --shapes "$DIR/tie.json" --db "$db" > "$DIR/tie.txt" 2>&1 || { tail -20 "$DIR/tie.txt"; return 1; }
    key=$(q "$db" "SELECT problem_key FROM selection WHERE op = 'attn_decode' ORDER BY problem_key DESC LIMIT 1")
    echo "problem: $key"; q "$db" "SELECT kernel, decided_by, time_us FROM selection WHERE problem_key = '$key'"
    best=$(q "$db" "SELECT m.code_hash FROM measurement m JOIN pass p ON p.id = m.pass_id WHERE p.problem_key = '$key @equal'
                    AND p.kind = 'tiebreak' ORDER BY m.median_us LIMIT 1")
    [ -n "$best" ] &&
    [ "$(q "$db" "SELECT code_hash FROM selection WHERE problem_key = '$key'")" = "$best" ] &&
    [ "$(q "$db" "SELECT decided_by FROM selection WHERE problem_key = '$key'")" = "@equal: fastest" ] &&
    [ "$(q "$db" "SELECT time_us FROM selection WHERE problem_key = '$key'")" = 5.0 ] &&
    [ "$(q "$db" "SELECT count(*) FROM pass WHERE problem_key = '$key' AND kind = 'tiebreak'")" = 0 ] &&
    [ "$(q "$db" "SELECT count(*) FROM problem WHERE key = '$key @equal'")" = 1 ] &&
    out/bin/kt dump --db "$db" > "$DIR/tie-dump.txt"
}
check "a tie is timed again on the op's second instance (attention @equal), decided and recorded there" second_instance

echo "sweep: $checks checks, $failed failed"
[ "$failed" = 0 ]
