#!/bin/sh
# The twenty-eighth session's three calls run inline after callG.sh on the same warm H100 (their
# results: i1.tgz, f1.tgz, f2.tgz), kept as run. Carry out/lib out/c35. Usage: sh inline_calls.sh i1|f1|f2
set -u
. tests/device/env.sh
K=tests/device/keep.py
case "$1" in
i1) # PF 1 / PF 2 / ST 2 / both at 16K hv 8 and 16, each DB alone (the --ab path was broken), twice
    call_begin i1; xz -dc out/c35/gdn_all.ktdb.xz > $W/c35.ktdb; P="gdn_prefill BT=64 BV=16 NW=8"
    for s in "new PF=1 ST=1" "pf2 PF=2 ST=1" "st2 PF=1 ST=2" "both PF=2 ST=2"; do set -- $s; python3 $K $W/c35.ktdb $W/$1.ktdb $P $2 $3 >/dev/null; done
    for i in 1 2; do for s in new pf2 st2 both; do for rows in 1x16384/8 1x16384/16; do
        mkdir -p $R/$s$i; OUT=$R/$s$i timeout 40 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/$s.ktdb --profile \
            --rounds 5 --rows $rows > $R/$s$i-${rows#1x16384/}.log 2>&1; echo "$s $i $rows rc=$? $(el)"
    done; done; done; call_end i1 ;;
f1) # Nsight Compute: _wy, the state pass, _out (details), the state pass's SASS stall samples
    call_begin f1; xz -dc out/c35/gdn_all.ktdb.xz > $W/c35.ktdb
    python3 $K $W/c35.ktdb $W/new.ktdb gdn_prefill BT=64 BV=16 NW=8 PF=1 ST=1
    NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/new.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
    timeout 150 $NCU --section SourceCounters --section WarpStateStats --section Occupancy --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --page details -k regex:"_wy\$|st1\$|_out\$" -c 3 $B > $R/ncu-details.txt 2>&1
    timeout 150 $NCU --section SourceCounters --page source --print-source sass -k regex:"st1\$" -c 1 $B > $R/ncu-sass-state.txt 2>&1
    gzip -9 $R/*.txt; call_end f1 ;;
f2) # decode batch 32 / 128 at hv 32, 1 and 4 tokens, cold and hot: the law's pick against BV 32
    call_begin f2; xz -dc out/c35/gdn_all.ktdb.xz > $W/c35.ktdb; python3 $K $W/c35.ktdb $W/bv32.ktdb gdn_decode BV=32
    OUT=$R timeout 100 python3 tests/device/bench_gdn.py --lib $L --db $W/c35.ktdb --ab $W/bv32.ktdb --rounds 5 --hv 32 \
        --batch 32,128 --tokens 1,4 --regime cold,hot > $R/bench128.log 2>&1; call_end f2 ;;
esac
