#!/bin/sh
# Thirtieth session, device call B (~1 minute): the decode step's phases by SM clock (a
# KT_GDN_TRACE build of the batch-1 forms and the batch-128 form; trace_gdn.py). Carry out/lib out/tr.
set -u
. tests/device/env.sh
call_begin ${1:-b1}
K=tests/device/keep.py
T=tests/device/trace_gdn.py   # at bench/results/2026-12-06-h200-s30/ when these calls ran
for f in "bv32 BV=32 KPT=4" "bv128 BV=128 KPT=16 OB=0" "ob2 BV=128 KPT=16 OB=2"; do
    n=${f%% *}; python3 $K out/tr/tr.ktdb $W/$n.ktdb gdn_decode ${f#* } > /dev/null || echo "keep $n failed"
done
for x in bv32:8:1 bv128:8:1 bv32:8:8 ob2:32:128; do
    db=${x%%:*}; r=${x#*:}; hv=${r%%:*}; b=${r#*:}
    timeout 60 python3 $T $L $W/$db.ktdb $hv $b 2>&1 | tee -a $R/trace.log | cut -c1-140
done
call_end ${1:-b1}
