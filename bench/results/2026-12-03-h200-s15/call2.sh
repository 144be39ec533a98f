#!/bin/sh
# Fifteenth session, device call 2 (bench/NOTES.md, "prefill.hip's epilogue, its copies' addresses
# and its rescale"): prefill on the law's picks for HEAD's prefill.hip (pf_old), the new one (new:
# call 1's database, whose prefill kernels are the new code's), and the new one with its QL 0
# kernels removed (new_ql1: QL 1 takes every head size's pick), bench_prefill.py, flash and cuDNN
# in each run; the new code's prefill checks (chunked prefill over a 32K prefix, windows).
set -u
t0=$(date +%s)
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s) - t0 )) s"; }
DB=out/ab/sweep.ktdb
[ -f $DB ] || xz -dkf $DB.xz
xz -dkf out/ab/pf_old.ktdb.xz
R=$OUT/c2; mkdir -p $R
python3 -c "
import sqlite3, shutil; shutil.copyfile('$DB', 'out/ab/new_ql1.ktdb'); c = sqlite3.connect('out/ab/new_ql1.ktdb')
c.execute(\"delete from kernel where template = 'attn/prefill.hip' and name like '%ql0%'\")
c.commit(); print('new_ql1.ktdb:', c.execute(\"select count(*) from kernel where template = 'attn/prefill.hip'\").fetchone()[0], 'prefill kernels')"
for x in pf_old:out/ab/pf_old.ktdb new:$DB new_ql1:out/ab/new_ql1.ktdb; do
  n=${x%%:*}; d=${x#*:}
  P="timeout 130 python3 tests/device/bench_prefill.py --lib out/lib/libktrt.so --db $d --rounds 5"
  OUT=$R $P --tsv pf-$n.tsv --geom 32/8/128,6/1/256,8/4/256,16/2/256 --tokens 4096,32768 > $R/pf-$n.log 2>&1; echo "prefill $n rc=$? $(el)"
done
grep -h "^bf16\|law kt_\|   ours\|   flash\|   cudnn" $R/pf-*.log | cut -c1-140 | head -100
P="python3 tests/device/bench_prefill.py --lib out/lib/libktrt.so --check-only"
timeout 80 $P --db $DB --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,200,3000 --prefix 0,32752 > $R/check5.log 2>&1; echo "check5 rc=$? $(el)"
timeout 80 $P --db out/ab/new_ql1.ktdb --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,8/4/256 --tokens 16,200,3000 --prefix 0,32752 --window 1000 > $R/check6.log 2>&1; echo "check6 rc=$? $(el)"
tail -qn 1 $R/check5.log $R/check6.log
grep -h "WRONG\|FAIL" $R/check5.log $R/check6.log | head
# every kernel of one bench_attn run of 32/8/128 batch 8 32K (ours, the reference, cuDNN, flash),
# unfiltered: names, grids, registers, time and DRAM read (the fourteenth session's filters never
# caught cuDNN's kernel)
timeout 150 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,sm__warps_active.avg.pct_of_peak_sustained_active --print-summary per-kernel \
  python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 1 --launches 1 --max-launches 1 --dtype bf16 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ncu-all-128.txt 2>&1; echo "ncu rc=$? $(el)"
grep -vE "^==PROF==|^ *$" $R/ncu-all-128.txt | cut -c1-160 | grep -E "^  [a-zA-Z_]|gpu__time|grid_size|registers" | head -60
tar czf $OUT/c2.tgz -C $OUT c2 && rm -rf $R
echo "done $(el)"
