#!/usr/bin/env python3
"""reader_bound.py (nineteenth session): what a kernel that only reads can do at the unmet rows'
byte counts. A Triton reader (each program sums a contiguous share, four loads of BLOCK fp32 in
flight a step) over the MB given (268 / 537 / 1074: the KV bytes of 6/1/256, 16/2/256 and 32/8/128 at batch
8, 32K; one size a process: a second size's capture failed in one), the grid from one block a unit (132) to 64 a unit, graph-timed (20 launches a replay, L2
flushed before each replay), rounds interleaved, median and spread; the read ceiling of
bench_common in the same run. One wave of 528 programs of 4 warps is the decode's own partition
(4 blocks of 4 warps a unit). Its kernel is bench_common's reader with the loads marked .cg (L2
only, as the decode's streaming loads are), kept here as it ran."""
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tests/device"))
from bench_common import read_ceiling_gbs  # noqa: E402


@triton.jit
def read_kernel(x, out, n_per_prog, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    base = x + pid.to(tl.int64) * n_per_prog
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n_per_prog, 4 * BLOCK):
        offs = i + tl.arange(0, BLOCK)
        a = tl.load(base + offs, cache_modifier=".cg")
        b = tl.load(base + offs + BLOCK, cache_modifier=".cg")
        c = tl.load(base + offs + 2 * BLOCK, cache_modifier=".cg")
        d = tl.load(base + offs + 3 * BLOCK, cache_modifier=".cg")
        acc += (a + b) + (c + d)
    tl.store(out + pid, tl.sum(acc, axis=0))


def main():
    ceiling = read_ceiling_gbs()
    print("read ceiling %.1f GB/s" % ceiling)
    stream = torch.cuda.Stream()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    launches, rounds = 20, 11
    for mb in [float(v) for v in sys.argv[1:]] or (268.4,):
        n = int(mb * 1e6) // 4
        x = torch.ones(n, dtype=torch.float32, device="cuda")
        graphs = []
        for progs, warps, block in ((132, 8, 1024), (264, 8, 1024), (528, 4, 512), (528, 8, 1024), (1056, 8, 1024),
                                    (2112, 8, 1024), (4224, 8, 1024), (8448, 4, 512)):
            per = (n // progs) // (4 * block) * (4 * block)
            out = torch.empty(progs, dtype=torch.float32, device="cuda")
            fn = lambda per=per, progs=progs, out=out, warps=warps, block=block: read_kernel[(progs,)](
                x, out, per, BLOCK=block, num_warps=warps)
            with torch.cuda.stream(stream):
                fn()
            stream.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=stream):
                for _ in range(launches):
                    fn()
            graphs.append(("%d x %dw" % (progs, warps), g, per * progs * 4))
        times = {k: [] for k, _, _ in graphs}
        for r in range(rounds):
            k = r % len(graphs)
            for name, g, _ in graphs[k:] + graphs[:k]:
                with torch.cuda.stream(stream):
                    flush.zero_()
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    g.replay()
                    e1.record()
                e1.synchronize()
                times[name].append(e0.elapsed_time(e1) * 1e3 / launches)
        print("%.1f MB:" % mb)
        for name, _, nbytes in graphs:
            ts = times[name]
            med = statistics.median(ts)
            print("   %-12s %9.2f us [%9.2f, %9.2f]  %6.1f%% of the read ceiling" % (
                name, med, min(ts), max(ts), 100.0 * nbytes / med / 1e3 / ceiling))
        del graphs, x
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
