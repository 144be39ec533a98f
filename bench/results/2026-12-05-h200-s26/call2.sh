#!/bin/sh
# Twenty-sixth session, device call 2 (after call1.sh, same carry): Nsight Compute where the rows
# still miss their bars, kept whole so that a session without a device can read them: the decode
# step at batch 1 x hv 8 on the law's split-norm form, and the prefill's state pass (PF 1 and PF 2)
# and _wy at one 16K sequence, each with its sections and its per-instruction (SASS) stall samples;
# the SASS of both code objects. Carry out/lib out/c32. Results: $OUT/n4.tgz.
set -u
. tests/device/env.sh
call_begin n4
xz -dc out/c32/gdn_all.ktdb.xz > $W/all.ktdb
P=bench/results/2026-12-05-h200-s25/pick.py
python3 $P $W/all.ktdb $W/pf1.ktdb 64 16 8 1 && python3 $P $W/all.ktdb $W/pf2.ktdb 64 16 8 2
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SourceCounters"
D="python3 tests/device/bench_gdn.py --lib $L --db $W/all.ktdb --hv 8 --batch 1 --tokens 1 --regime hot --rounds 1 --launches 1"
timeout 120 $NCU $S --page details -k regex:kt_gdn_decode -c 1 $D > $R/decode-sections.txt 2>&1; echo "ncu decode rc=$? $(el)"
grep -E "kt_gdn_decode|Duration|Warp Cycles Per Issued|Issued Ipc|Achieved Occupancy|Registers Per" $R/decode-sections.txt | cut -c1-150
timeout 120 $NCU --section SourceCounters --section WarpStateStats --page source --print-source sass \
    -k regex:kt_gdn_decode -c 1 $D > $R/decode-sass.txt 2>&1; echo "ncu decode sass rc=$? $(wc -l < $R/decode-sass.txt)"
for pf in 1 2; do
    B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/pf$pf.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
    timeout 150 $NCU $S --page details -k regex:kt_gdn_prefill -c 4 $B > $R/prefill-pf$pf-sections.txt 2>&1
    echo "ncu prefill pf$pf rc=$? $(el)"
    grep -E "kt_gdn_prefill|Duration|Warp Cycles Per Issued|Issued Ipc|Achieved Occupancy|DRAM Throughput|L2 Hit" \
        $R/prefill-pf$pf-sections.txt | cut -c1-150
    timeout 150 $NCU --section SourceCounters --section WarpStateStats --page source --print-source sass \
        -k regex:"_wy\$|pf$pf\$" -c 2 $B > $R/prefill-pf$pf-sass.txt 2>&1; echo "ncu prefill pf$pf sass rc=$? $(wc -l < $R/prefill-pf$pf-sass.txt)"
done
python3 - $W/all.ktdb $W <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for name in ("kt_gdn_decode_bf16_vk0_dk128_dv128_bv32_nw8_kpt4_mt1_ob0", "kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_bv16_nw8_pf1",
             "kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_bv16_nw8_pf2"):
    row = db.execute("SELECT code FROM kernel WHERE name = ? AND target = 'sm_90a'", (name,)).fetchone()
    if row:
        open("%s/%s.cubin" % (sys.argv[2], name), "wb").write(row[0])
PY
for f in $W/*.cubin; do [ -n "$CUOBJ" ] && $CUOBJ -sass $f > $R/$(basename $f .cubin).sass 2>&1; done
ls -la $R | head -20
gzip -9 $R/*.txt $R/*.sass 2>/dev/null
call_end n4
