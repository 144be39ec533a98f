#!/bin/sh
# Twelfth session, device call 6: the parts of a decode launch's fixed cost, for the next session's
# design (bench/NOTES.md, "Open bars after the twelfth session"): our decode at 16 keys (one
# segment, no reduce), 256 and 4K keys (split: decode + reduce), batch 1 and 8, cuDNN beside; and a
# CUDA graph of tiny dependent kernels (torch), the per-node floor a graph replay pays.
set -u
t0=$(date +%s)
R=$OUT/c6; mkdir -p $R
export PYTHONUNBUFFERED=1
[ -f out/ab/old.ktdb ] || gunzip -k out/ab/old.ktdb.gz
timeout 60 python3 tests/device/bench_attn.py --db out/ab/old.ktdb --lens equal --rounds 9 --d 256 --g 6 --hkv 1 --q 1 \
    --batch 1,8 --ctx 16,256,4096 --tsv fixed.tsv > $R/fixed.log 2>&1; echo "fixed rc=$? $(( $(date +%s) - t0 )) s"
OUT=$R true
timeout 40 python3 - > $R/graph_floor.log 2>&1 <<'PY'
import statistics, torch
x = torch.zeros(1, device="cuda")
s = torch.cuda.Stream()
for n in (1, 2, 20, 40):
    with torch.cuda.stream(s):
        for _ in range(3): x.add_(1)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for _ in range(n): x.add_(1)
    ts = []
    for _ in range(15):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    print("graph of %2d dependent tiny kernels: median %.2f us, %.2f us a kernel" % (n, statistics.median(ts), statistics.median(ts) / n))
PY
echo "floor rc=$? $(( $(date +%s) - t0 )) s"
cat $R/graph_floor.log
grep -E "^   (ours|cudnn|flash)|^bf16 d=|exact|law" $R/fixed.log | head -40
tar czf $OUT/c6.tgz -C $OUT c6 && rm -rf $R
