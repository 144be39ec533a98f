"""Seventeenth session, call 4: what a kernel that only reads pays a launch beyond its bytes.
The read ceiling's Triton reader (tests/device/bench_common.py) over 128 MiB to 4 GiB, 20 launches
a CUDA graph, each launch reading its own buffer (cache-cold), median of 11 replays; the fit
time = fixed + bytes / rate over the sizes gives the reader's fixed cost and marginal rate, as
bench/NOTES.md fits the decode rows."""
import os
import sys
import statistics
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../tests/device"))
from bench_common import _triton_reader  # noqa: E402

kern = _triton_reader()
block = 1024
progs = 2112
rows = []
for mib in (128, 256, 512, 1024, 2048, 4096):
    n = mib * (1 << 20) // 4
    per = (n // progs) // (4 * block) * (4 * block)
    nbytes = per * progs * 4
    sets = max(1, min(20, (8 << 30) // (mib << 20)))
    bufs = [torch.ones(n, dtype=torch.float32, device="cuda") for _ in range(sets)]
    out = torch.empty(progs, dtype=torch.float32, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        kern[(progs,)](bufs[0], out, per, BLOCK=block, num_warps=8)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    launches = 20
    with torch.cuda.graph(g, stream=s):
        for i in range(launches):
            kern[(progs,)](bufs[i % sets], out, per, BLOCK=block, num_warps=8)
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(11):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3 / launches)
    med = statistics.median(ts)
    rows.append((nbytes, med))
    print("read %6d MiB (%d buffers): %9.2f us a launch [%8.2f, %8.2f]  %6.0f GB/s" % (
        mib, sets, med, min(ts), max(ts), nbytes / (med * 1e-6) / 1e9), flush=True)
    del bufs, g
    torch.cuda.empty_cache()
# least squares: t = f + b / r
xs = [b / 1e6 for b, _ in rows]
ys = [t for _, t in rows]
mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
print("fit: fixed %.2f us, marginal %.0f GB/s" % (my - slope * mx, 1e3 / slope))
