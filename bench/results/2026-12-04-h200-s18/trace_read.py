#!/usr/bin/env python3
"""trace_read.py: where a decode launch's time goes inside its main kernel. The kernels are built
with trace.patch (-DKT_TRACE): each block's thread 0 writes, into the output buffer, its
%globaltimer at entry (t0) and the offsets of three points (after its first two KV tiles, after its
last, at exit), its SM and its keys. Eager launches, each after an L2 flush; the summary is each
quantity's quantiles over the blocks, medians over the launches.

  python3 trace_read.py --lib L --db trace.ktdb --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.getcwd(), "tests/device"))
import bench_attn as B  # noqa: E402


def q(v, f):
    v = sorted(v)
    return v[min(len(v) - 1, int(f * (len(v) - 1) + 0.5))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--g", type=int, default=8)
    ap.add_argument("--hkv", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--ctx", type=int, default=32768)
    ap.add_argument("--launches", type=int, default=9)
    a = ap.parse_args()
    kt = B.Ktrt(os.path.abspath(a.lib), a.db)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    cpu_gen = torch.Generator()
    cpu_gen.manual_seed(4321)
    P = B.Problem(a.dtype, a.d, a.g, a.hkv, 1, [a.ctx] * a.batch, 16, 0, 0.0, 0, 1, "cuda", gen, cpu_gen)
    rc, ch, err = kt.choose(a.dtype, P.args[0])
    print("%s %d/%d/%d batch %d ctx %d: %s, %d segments" % (a.dtype, a.g * a.hkv, a.hkv, a.d, a.batch, a.ctx,
                                                           ch.kernel.decode(), ch.splitk))
    flush = torch.empty(2 * B.L2_BYTES, dtype=torch.uint8, device="cuda")
    out = P.out[0]
    words = out.numel() * out.element_size() // 4
    keys = {"start": [], "first2": [], "stream": [], "epi": [], "end": [], "span": [], "tail": [], "res": []}
    for it in range(a.launches):
        out.zero_()
        flush.zero_()
        torch.cuda.synchronize()
        kt.run(a.dtype, P.args[0])
        torch.cuda.synchronize()
        w = out.view(torch.int32).view(-1)[: words - words % 8].view(-1, 8).cpu().tolist()
        recs = [[x & 0xffffffff for x in r] for r in w if r[0] or r[1]]
        t0 = [r[0] | r[1] << 32 for r in recs]
        base = min(t0)
        start = [(x - base) / 1e3 for x in t0]
        first2 = [r[2] / 1e3 for r in recs if r[2]]
        stream = [(r[3] - r[2]) / 1e3 for r in recs if r[2]]
        epi = [(r[4] - r[3]) / 1e3 for r in recs]
        end = [(x - base + r[4]) / 1e3 for x, r in zip(t0, recs)]
        st = sorted(set(t0))
        res = min((b - a_) for a_, b in zip(st, st[1:]) if b > a_) if len(st) > 1 else 0
        for k, v in (("start", start), ("first2", first2), ("stream", stream), ("epi", epi), ("end", end)):
            keys[k].append([q(v, f) for f in (0.0, 0.1, 0.5, 0.9, 1.0)])
        keys["span"].append(max(end))
        keys["tail"].append(max(end) - q(end, 0.5))
        keys["res"].append(res)
        if it == 0:
            per_sm = {}
            for r, e in zip(recs, end):
                per_sm.setdefault(r[5], []).append(e)
            counts = sorted(len(v) for v in per_sm.values())
            lens = sorted(set(r[7] - r[6] for r in recs))
            print("   %d blocks on %d SMs (blocks an SM: %d-%d); keys a block: %s" % (
                len(recs), len(per_sm), counts[0], counts[-1], lens[:6]))
            late = sorted(per_sm.items(), key=lambda kv: -max(kv[1]))[:4]
            print("   the latest SMs' block ends (us): %s" % "; ".join(
                "sm %d: %s" % (k, ", ".join("%.1f" % x for x in sorted(v))) for k, v in late))
    print("   us over the blocks (min / p10 / p50 / p90 / max), the median launch of %d:" % a.launches)
    for k in ("start", "first2", "stream", "epi", "end"):
        med = [statistics.median(x[i] for x in keys[k]) for i in range(5)]
        print("   %-8s %s" % (k, " / ".join("%7.2f" % x for x in med)))
    print("   kernel span (first entry to last exit) %.2f us, last exit past the median %.2f us, timer step %d ns"
          % (statistics.median(keys["span"]), statistics.median(keys["tail"]), min(keys["res"])))


if __name__ == "__main__":
    main()
