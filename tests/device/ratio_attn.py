#!/usr/bin/env python3
"""ratio_attn.py: the issue's ratio bars (q 8 against q 1, fp8 against bf16, a window against a
short context) read as ratios paired a round: every row's graph is replayed in each round (rotated
order, cache flushed before each replay), the first row twice (its second copy the control), and
each ratio is taken within a round before its median and quartiles are taken over the rounds. A
clock that moves between rounds moves both sides of a round's ratio alike; a ratio of two medians
taken apart (ab_attn.py, bench_attn.py) carries it.

  python3 tests/device/ratio_attn.py --lib out/lib/libktrt.so --db x.ktdb \
      --row q1=bf16,256,8,2,1,8,32768 --row q8=bf16,256,8,2,8,8,32768 --ratio q8/q1 --rounds 41

A row is dtype,d,g,hkv,q,batch,ctx[,window]: equal lengths, block size 16, random block tables.
Each row's launch is checked against the float64 reference first.
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_attn as B  # noqa: E402


def parse_row(s):
    name, _, spec = s.partition("=")
    f = spec.split(",")
    if not name or len(f) not in (7, 8):
        sys.exit("--row %s: want NAME=dtype,d,g,hkv,q,batch,ctx[,window]" % s)
    try:
        v = [int(x) for x in f[1:]]
    except ValueError:
        sys.exit("--row %s: d, g, hkv, q, batch, ctx and window are integers" % s)
    return name, f[0], v + [0] * (8 - len(f))


def quartiles(v):
    q = statistics.quantiles(v, n=4) if len(v) >= 2 else [v[0]] * 3
    return q[0], statistics.median(v), q[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="out/lib/libktrt.so")
    ap.add_argument("--db", default=None)
    ap.add_argument("--row", action="append", required=True, help="NAME=dtype,d,g,hkv,q,batch,ctx[,window]")
    ap.add_argument("--ratio", action="append", default=[], help="NUM/DEN: two row names")
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--launches", type=int, default=20)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    rows = [parse_row(s) for s in a.row]
    names = [r[0] for r in rows]
    if len(set(names)) != len(names):
        sys.exit("--row: names must differ")
    ratios = []
    for s in a.ratio:
        n, _, d = s.partition("/")
        if n not in names or d not in names:
            sys.exit("--ratio %s: both sides must name a --row (%s)" % (s, ", ".join(names)))
        ratios.append((n, d))
    B.check_header()
    kt = B.Ktrt(os.path.abspath(a.lib), a.db)
    stream, flush, gen, cpu_gen = B.timing_setup()
    graphs, fails = [], 0
    for name, dname, (d, g, hkv, q, batch, ctx, window) in rows:
        lens = B.seq_lengths(batch, ctx, q, "equal", cpu_gen)
        est = B.set_bytes_estimate(dname, d, g, hkv, q, lens, 16, window)
        nsets = B.cold_sets(est, 64)
        launches = max(a.launches, nsets)
        with torch.cuda.stream(stream):
            P = B.Problem(dname, d, g, hkv, q, lens, 16, window, 0.0, 0, nsets, "cuda", gen, cpu_gen)
            ref = P.reference(0)
        stream.synchronize()
        ch, e, ok = B.launch_checked(kt, dname, P, ref, stream)
        if ch is None:
            print("%-8s refused: %s" % (name, e))
            fails += 1
            continue
        fails += 0 if ok else 1
        del ref
        print("%-8s %s d=%d g=%d hkv=%d q=%d batch=%d ctx=%d win=%d: %s (split %d) err %.2e%s" % (
            name, dname, d, g, hkv, q, batch, ctx, window, ch.kernel.decode(errors="replace"), ch.splitk, e,
            "" if ok else "  WRONG"))
        gr = B.capture((lambda P: lambda s: kt.run(dname, P.args[s]))(P), nsets, launches, stream)
        graphs.append((name, gr, launches, P))
    if fails:
        print("ratio_attn: %d failure(s)" % fails)
        return 1
    control = graphs[0][0] + " again"
    order = graphs + [(control,) + graphs[0][1:]]
    times = {o[0]: [] for o in order}
    for rnd in range(a.rounds):
        k = rnd % len(order)
        for name, gr, launches, _ in order[k:] + order[:k]:
            times[name].append(B.time_graph(gr, launches, flush, stream))
    print("us a launch over %d rounds (median [q1, q3] min..max):" % a.rounds)
    for name in times:
        lo, med, hi = quartiles(times[name])
        print("   %-12s %9.2f [%9.2f, %9.2f]  %9.2f..%9.2f" % (name, med, lo, hi, min(times[name]), max(times[name])))
    print("ratios paired a round (median [q1, q3] min..max; the ratio of the medians beside):")
    for n, d in ratios + [(control, graphs[0][0])]:
        r = [x / y for x, y in zip(times[n], times[d])]
        lo, med, hi = quartiles(r)
        print("   %-12s / %-12s %.4f [%.4f, %.4f]  %.4f..%.4f   (medians %.4f)" % (
            n, d, med, lo, hi, min(r), max(r), statistics.median(times[n]) / statistics.median(times[d])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
