#!/usr/bin/env python3
"""ab_attn.py: an A/B of attention decode builds in one process, on the same buffers: each --config
NAME=LIB[:DB] is a libktrt (and the database it opens) whose launch is checked against the float64
reference, graph-captured and timed in interleaved rounds (rotated order, cache flushed before each
replay) beside the others and cuDNN's SDPA on the same values. One Python start for all of them,
so a change whose effect is a few percent is read against the same run's spread. Rows are the
cartesian product of the shape options, as in bench_attn.py (whose Problem, reference and timing
this reuses). The first config is the base every ratio is taken against.

  python3 tests/device/ab_attn.py --config old=out/lib/libktrt.so:old.ktdb \
      --config new=out/lib/libktrt.so:new.ktdb --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768
"""
import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_attn as B  # noqa: E402
from bench_common import read_ceiling_gbs  # noqa: E402


def parse_config(s):
    name, _, rest = s.partition("=")
    lib, _, db = rest.partition(":")
    if not name or not lib:
        sys.exit("--config %s: want NAME=LIB[:DB]" % s)
    return name, lib, db or None


def run_row(a, kts, cfg, stream, flush, ceiling, gen, cpu_gen, peers_api):
    dname, d, g, hkv, q, batch, ctx, window, softcap, sinks = cfg
    lens = B.seq_lengths(batch, ctx, q, a.lens, cpu_gen)
    est = B.set_bytes_estimate(dname, d, g, hkv, q, lens, a.bs, window)
    nsets = B.cold_sets(est, 64)
    launches = max(a.launches, nsets)
    with torch.cuda.stream(stream):
        P = B.Problem(dname, d, g, hkv, q, lens, a.bs, window, softcap, sinks, nsets, "cuda", gen, cpu_gen,
                      ordered=a.table == "ordered")
    stream.synchronize()
    tag = "%s d=%d g=%d hkv=%d q=%d batch=%d ctx=%d win=%d cap=%g sink=%d lens=%s" % (
        dname, d, g, hkv, q, batch, ctx, window, softcap, sinks, a.lens)
    print(tag)
    fails = 0
    methods = []
    kernels = {}
    with torch.cuda.stream(stream):
        ref = P.reference(0)
    stream.synchronize()
    for name, kt in kts:
        ch, e, ok = B.launch_checked(kt, dname, P, ref, stream)
        if ch is None:
            print("   %-10s refused: %s" % (name, e))
            fails += 1
            continue
        fails += 0 if ok else 1
        print("   %-10s %s (split %d) err %.2e%s" % (name, ch.kernel.decode(errors="replace"), ch.splitk, e,
                                                     "" if ok else "  WRONG"))
        methods.append((name, (lambda kt: lambda s: kt.run(dname, P.args[s]))(kt), nsets))
        kernels[name] = ch.kernel.decode(errors="replace")
    del ref
    if peers_api[0] is not None and not a.no_peers:
        npeer = B.cold_sets(max(1.0, 2.0 * batch * hkv * B.visible_keys(ctx, q, window) * d * 2), nsets)
        with torch.cuda.stream(stream):
            pd = B.PeerData(P, npeer)
        stream.synchronize()
        for label, backend in peers_api[1]:
            if label != "cudnn":
                continue
            fn, note = B.try_peer(peers_api[0], backend, pd, P)
            if fn is not None:
                methods.append((label, fn, npeer))
    graphs = [(name, B.capture(fn, ns, launches, stream)) for name, fn, ns in methods]
    times = {name: [] for name, _ in graphs}
    for rnd in range(a.rounds):
        k = rnd % len(graphs)
        for name, gr in graphs[k:] + graphs[:k]:
            times[name].append(B.time_graph(gr, launches, flush, stream))
    if a.timeline:
        for name, gr in graphs:
            if name in kernels:
                timeline(name, kernels[name], gr, flush, stream)
    del graphs
    bm = P.bytes_moved()
    base = statistics.median(times[methods[0][0]]) if methods else float("nan")
    rows = []
    for name, ts in times.items():
        med = statistics.median(ts)
        print("   %-10s %9.2f us [%9.2f, %9.2f]  %6.1f%% of the read ceiling  x base %.3f" % (
            name, med, min(ts), max(ts), 100.0 * bm / med / 1e3 / ceiling, med / base))
        rows.append((tag, name, med, min(ts), max(ts)))
    sys.stdout.flush()
    return rows, fails


def timeline(name, kernel, gr, flush, stream):
    """One replay of a config's graph under the profiler: where a launch's time goes between its main
    kernel (start to end), the reduce's tail past it, and the gap to the next launch's main kernel."""
    with torch.cuda.stream(stream):
        flush.zero_()
    stream.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        with torch.cuda.stream(stream):
            gr.replay()
        stream.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        with open(f.name) as t:
            ev = json.load(t).get("traceEvents", [])
    ks = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in ev if e.get("cat") == "kernel")
    mains = [(s, e) for s, e, n in ks if n == kernel]
    reds = [(s, e) for s, e, n in ks if n == kernel + "_reduce"]
    if not mains:
        print("   %-10s timeline: no kernel %s among %d recorded" % (name, kernel, len(ks)))
        return
    span = (max(e for _, e, _ in ks) - mains[0][0]) / len(mains)
    dur = [e - s for s, e in mains]
    tail = [r[1] - m[1] for m, r in zip(mains, reds)] if len(reds) == len(mains) else []
    ends = [r[1] for r in reds] if tail else [e for _, e in mains]
    gap = [mains[i + 1][0] - ends[i] for i in range(len(mains) - 1)]
    med = lambda v: statistics.median(v) if v else float("nan")  # noqa: E731
    print("   %-10s timeline (us, median of %d launches): main %.2f [%.2f, %.2f], reduce past it %.2f, "
          "to the next main %.2f, a launch's span %.2f" % (name, len(mains), med(dur), min(dur), max(dur), med(tail),
                                                           med(gap), span))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", action="append", required=True, help="NAME=LIB[:DB], the first is the base")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--d", default="256")
    ap.add_argument("--g", default="8")
    ap.add_argument("--hkv", default="2")
    ap.add_argument("--q", default="1")
    ap.add_argument("--batch", default="8")
    ap.add_argument("--ctx", default="32768")
    ap.add_argument("--lens", default="equal", choices=["mixed", "equal"])
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--table", default="random", choices=["random", "ordered"],
                    help="block tables: a random permutation (serving), or each sequence's blocks in order")
    ap.add_argument("--window", default="0")
    ap.add_argument("--softcap", default="0")
    ap.add_argument("--sinks", default="0")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--launches", type=int, default=20)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--timeline", action="store_true",
                    help="also one replay of each graph under the profiler (it leaves the process's later launches "
                         "slower: ratios within a run hold, absolute times come from runs without it)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    B.check_header()
    ceiling = read_ceiling_gbs()
    print("device %s; read ceiling %.0f GB/s; configs: %s" % (torch.cuda.get_device_name(), ceiling,
                                                             ", ".join(a.config)))
    kts = []
    for s in a.config:
        name, lib, db = parse_config(s)
        kts.append((name, B.Ktrt(os.path.abspath(lib), db)))
    peers_api = B.sdpa_backends()
    stream, flush, gen, cpu_gen = B.timing_setup()
    fails = 0
    axes = (a.dtype.split(","), B.ints(a.d), B.ints(a.g), B.ints(a.hkv), B.ints(a.q), B.ints(a.batch), B.ints(a.ctx),
            B.ints(a.window), B.floats(a.softcap), B.ints(a.sinks))
    for cfg in itertools.product(*axes):
        fails += run_row(a, kts, cfg, stream, flush, ceiling, gen, cpu_gen, peers_api)[1]
    print("ab_attn: %d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
