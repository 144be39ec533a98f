#!/bin/sh
# Thirty-sixth session, device call Q (~3 minutes): which harness is right about the K-last decode
# at batch 128 x hv 32 (call G's sweep timed bv64 nw4 kpt16 at 188.2 us, call H's bench_gdn at
# 211.1). One database (out/s40/q.ktdb.xz: only bv64 nw4 kpt16 mt1 / mt8, nothing measured) through
# 1. the sweep (tune --tp 1 --only gdn_decode: 40 problems, the worker's cold timing), 2. bench_gdn's
# rows at batch 32 and 128 x hv 32 (cold and hot, the same kernel by the sweep's selection), 3. Nsight
# Compute's duration and DRAM throughput of one launch at batch 128 (an arbiter: no graph, no
# harness). Carry out/bin out/lib out/device out/s40. $OUT/q1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-q1}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
db_unpack out/s40/q.ktdb.xz
model_sweep sweep-tp1.log 150 --modelpath models/qwen3-next-80b-a3b --tp 1 --only gdn_decode --budget-min 2
./out/bin/kt dump --db "$DB" | grep -A3 "hv=32 kw=4 norm=1 vk=1 q<=1 batch<=128\"" | grep -E "^pass|time " | cut -c1-200
./out/bin/kt dump --db "$DB" | grep -A3 "hv=32 kw=4 norm=1 vk=1 q<=1 batch<=32\"" | grep -E "time " | cut -c1-200
OUT=$R timeout 100 python3 tests/device/bench_gdn.py --lib $L --db "$DB" --vk 1 --rounds 5 --hv 32 --batch 32,128 \
    --tokens 1 --regime cold,hot > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|ceilings" $R/bench.log | cut -c1-120
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 90 $NCU --section SpeedOfLight --section MemoryWorkloadAnalysis -k regex:"bv64_nw4_kpt16_mt1" -c 3 \
    python3 tests/device/bench_gdn.py --lib $L --db "$DB" --vk 1 --rounds 1 --launches 1 --hv 32 --batch 128 \
    --tokens 1 --regime cold > $R/ncu.txt 2>&1; echo "ncu rc=$? $(el)"
grep -E "Duration|DRAM Throughput|Memory Throughput|SM Frequency|DRAM Frequency" $R/ncu.txt | head -12
./out/bin/kt dump --db "$DB" | gzip > $R/dump.txt.gz
call_end ${N:-q1}
