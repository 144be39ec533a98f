#!/usr/bin/env python3
"""bench_prefill.py: ktune's paged prefill attention (op attn_prefill) through libktrt against torch SDPA.

Runs on the GPU machine (PyTorch with CUDA), beside bench_attn.py, whose ABI mirror, problem
(vLLM's NHD paged cache, a block table that is a random permutation of the physical blocks),
libktrt wrapper, peers and graph timing it reuses:

    python3 tests/device/bench_prefill.py [--lib out/lib/libktrt.so] [--db out/ktune.ktdb]
        [--dtype bf16,bf16_e4m3] [--geom 32/8/128,6/1/256,8/4/256,16/2/256] [--tokens 4096,32768]
        [--batch 1] [--prefix 0] [--bs 16] [--window 0] [--rounds 7] [--launches 3] [--check-only]

Geometries are q heads / kv heads / head size. A row is --batch sequences of --tokens new tokens
each after a cached prefix of --prefix keys: 0 is a plain prefill; more is chunked prefill, the new
tokens attending to the prefix and causally to themselves, bottom-right aligned (ABI:
templates/abi/attn.h).

Correctness: out poisoned with NaN, one launch, against a float64 reference of a sample of each
sequence's query rows (the first 64, the last 128, which see every key, and 64 at random),
||out - ref|| / ||ref|| over the sample within bench_attn's bound (2^-6 bf16 q, 2^-8 fp16 q), checked
again after the timed replays.

Peers, without a window only: SDPA's cuDNN and flash backends on contiguous q [B][H][T][D] and K/V
[B][Hkv][L][D] holding the cache's values (fp8 caches dequantized to the q dtype), GQA through
enable_gqa; is_causal=True for a plain prefill (SDPA's is_causal is top-left aligned, which is the
bottom-right alignment only when the keys are the new tokens), and with a prefix (chunked prefill)
without a mask: every new token against all L keys, the new tokens' triangle (T^2 / 2 keys of
T x L) computed whole, so the peer does slightly more work than the problem asks (its time is
the one to beat).

--ab NAME=DB (repeatable): another database's selection, through the same libktrt, checked as ours
is and timed as one more method in the same rounds (x_ours against ours: an A/B read against one
run's spread, the peers beside it).

Timing (METHOD.md): a CUDA graph of --launches launches a method, replayed after an L2 flush, rounds
interleaving the methods in rotated order, median, min and max; "ours again" is the control.
TFLOP/s counts 4 * head_size * heads * (the keys each query row sees): the causal half is not
counted, for ours and the peers alike. Prints a table; with $OUT, writes $OUT/<--tsv>. Exit status 1
on a wrong result, a refused problem or a failed launch.
"""
import argparse
import math
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_attn as BA  # noqa: E402


def sample_rows(ql, gen):
    rows = set(range(min(64, ql))) | set(range(max(0, ql - 128), ql))
    if ql > 192:
        rows |= set(torch.randint(0, ql, (64,), generator=gen).tolist())
    return sorted(rows)


def visible(pos, window):
    """keys a query row at position pos sees (causal, the window)"""
    return min(pos + 1, window) if window > 0 else pos + 1


def reference_rows(P, rows):
    """templates/abi/attn.h's function in float64 for query rows rows[i] (indices into sequence i's
    new tokens) of every sequence: one [len(rows[i])][H][D] tensor a sequence"""
    q = P.q[0]
    T, H, D = q.shape
    hkv, g = P.hkv, P.h // P.hkv
    starts = P.qsl.tolist()
    out = []
    for i, L in enumerate(P.lens):
        t0, ql = starts[i], starts[i + 1] - starts[i]
        nb = (L + P.bs - 1) // P.bs
        blocks = P.block_table[0, i, :nb].long()
        K = BA.gather_blocks(P.k_cache, blocks).reshape(nb * P.bs, hkv, D)[:L].to(torch.float64) * P.k_scale
        V = BA.gather_blocks(P.v_cache, blocks).reshape(nb * P.bs, hkv, D)[:L].to(torch.float64) * P.v_scale
        r = torch.tensor(rows[i], device=q.device, dtype=torch.long)
        o_all = torch.empty((len(rows[i]), H, D), dtype=torch.float64, device=q.device)
        step = max(1, (1 << 27) // (H * L))          # ~1 GiB of float64 scores at a time
        j = torch.arange(L, device=q.device)
        for r0 in range(0, len(rows[i]), step):
            rr = r[r0:r0 + step]
            Q = q[t0 + rr].to(torch.float64).reshape(len(rr), hkv, g, D)
            s = torch.einsum("tkgd,jkd->kgtj", Q, K) * P.scale
            if P.softcap > 0:
                s = P.softcap * torch.tanh(s / P.softcap)
            pos = (L - ql) + rr
            vis = j[None, :] <= pos[:, None]
            if P.window > 0:
                vis = vis & (pos[:, None] - j[None, :] < P.window)
            s = s.masked_fill(~vis, float("-inf"))
            m = s.amax(dim=-1)
            if P.sinks is not None:
                sk = P.sinks.to(torch.float64).reshape(hkv, g, 1).expand_as(m)
                m = torch.maximum(m, sk)
            m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
            p = torch.exp(s - m[..., None])
            l = p.sum(dim=-1)
            if P.sinks is not None:
                l = l + torch.exp(sk - m)
            o = torch.einsum("kgtj,jkd->tkgd", p, V)
            lt = l.permute(2, 0, 1)[..., None]
            o = torch.where(lt > 0, o / torch.where(lt > 0, lt, torch.ones_like(lt)), torch.zeros_like(o))
            o_all[r0:r0 + len(rr)] = o.reshape(len(rr), H, D)
        out.append(o_all)
    return out


def sampled_error(P, rows, ref):
    starts = P.qsl.tolist()
    got = torch.cat([P.out[0][starts[i] + torch.tensor(rows[i], device=P.out.device)] for i in range(P.batch)])
    return BA.rel_error(got, torch.cat(ref))


def flops(P):
    n = 0
    starts = P.qsl.tolist()
    for i, L in enumerate(P.lens):
        ql = starts[i + 1] - starts[i]
        n += sum(visible(L - ql + t, P.window) for t in range(ql))
    return 4.0 * P.d * P.h * n


class Peers:
    """contiguous q, K and V of the problem's values for SDPA"""

    def __init__(self, P):
        B, ql, H, hkv, D = P.batch, P.qlen, P.h, P.hkv, P.d
        L = P.lens[0]
        self.q = P.q[0].reshape(B, ql, H, D).permute(0, 2, 1, 3).contiguous()
        bt = P.block_table[0].long()
        out = []
        for src, sc in ((P.k_cache, P.k_scale), (P.v_cache, P.v_scale)):
            x = BA.gather_blocks(src, bt).reshape(B, P.max_blocks * P.bs, hkv, D)[:, :L]
            if P.fp8:
                x = (x.to(torch.float32) * sc).to(P.dtype)
            out.append(x.permute(0, 2, 1, 3).contiguous())
        self.k, self.v = out

    def method(self, sdpa_kernel, backend, scale, causal):
        F = torch.nn.functional

        def fn(_s):
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(self.q, self.k, self.v, is_causal=causal, scale=scale,
                                                      enable_gqa=True)
        return fn


def check_launch(kt, dname, P, rows, ref, label):
    """one launch into a NaN-poisoned out, its sampled error against ref (None: the launch failed)"""
    P.out[0].fill_(float("nan"))
    try:
        kt.run(dname, P.args[0], op="attn_prefill")
    except RuntimeError as e:
        print("   %s: launch failed: %s" % (label, e))
        return None
    return sampled_error(P, rows, ref)


def run_row(a, kt, cfg, stream, flush, gen, cpu_gen, peers_api, abs_=()):
    dname, (H, hkv, d), tokens, batch, prefix = cfg
    g = H // hkv
    L = prefix + tokens
    tag = "%s %d/%d/%d tokens=%d batch=%d prefix=%d bs=%d win=%d" % (dname, H, hkv, d, tokens, batch, prefix, a.bs,
                                                                     a.window)
    need = batch * tokens * H * d * 2 * 4 / 1e9 + 2.0 * batch * L * hkv * d * 2 * 2 / 1e9
    if need > a.mem_gb:
        print("%s: skipped, needs ~%.0f GB (--mem-gb %g)" % (tag, need, a.mem_gb))
        return [], 0
    with torch.cuda.stream(stream):
        P = BA.Problem(dname, d, g, hkv, tokens, [L] * batch, a.bs, a.window, 0.0, 0, 1, "cuda", gen, cpu_gen)
    stream.synchronize()
    rc, ch, err = kt.choose(dname, P.args[0], op="attn_prefill")
    kernel, path = ch.kernel.decode(errors="replace"), ch.path.decode(errors="replace")
    print("%s\n   key: %s\n   %s %s: %s" % (tag, ch.problem_key.decode(errors="replace"), path, kernel or "-",
                                             ch.reason.decode(errors="replace")))
    if rc != BA.KT_OK:
        print("   refused: rc %d: %s" % (rc, err))
        return [], 1
    rows = [sample_rows(tokens, cpu_gen) for _ in range(batch)]
    bound = BA.BOUND[P.qt]
    with torch.cuda.stream(stream):
        ref = reference_rows(P, rows)
        err0 = check_launch(kt, dname, P, rows, ref, "ours")
    stream.synchronize()
    if err0 is None:
        return [], 1
    failures = 0 if err0 <= bound else 1
    if failures:
        print("   WRONG: rel err %.3e > bound %.2e" % (err0, bound))
    if a.check_only:
        print("   err %.2e (bound %.2e) over %d sampled rows" % (err0, bound, sum(len(r) for r in rows)))

    info = {"ours": (path, kernel, err0)}   # a method of ours (ours, an A/B database): path, kernel, error
    ab_methods = []
    for name, k2 in abs_:
        rc2, ch2, e2 = k2.choose(dname, P.args[0], op="attn_prefill")
        if rc2 != BA.KT_OK:
            print("   %s: refused: rc %d: %s" % (name, rc2, e2))
            failures += 1
            continue
        kern2 = ch2.kernel.decode(errors="replace")
        print("   %s: %s %s" % (name, ch2.path.decode(errors="replace"), kern2))
        with torch.cuda.stream(stream):
            e = check_launch(k2, dname, P, rows, ref, name)
        stream.synchronize()
        if e is None or not e <= bound:
            print("   %s: WRONG: rel err %s > bound %.2e" % (name, e, bound))
            failures += 1
            continue
        info[name] = ("A/B", kern2, e)
        if a.check_only:
            print("   %s: err %.2e (bound %.2e)" % (name, e, bound))
        ab_methods.append((name, (lambda s, k2=k2: k2.run(dname, P.args[0], op="attn_prefill")), "A/B"))
    if a.check_only:
        return [], failures

    fl = flops(P)
    methods = [("ours", lambda s: kt.run(dname, P.args[0], op="attn_prefill"), "")] + ab_methods
    if a.window == 0 and peers_api[0] is not None and not a.no_peers:
        with torch.cuda.stream(stream):
            pd = Peers(P)
        stream.synchronize()
        for label, backend in peers_api[1]:
            if backend is None:
                continue
            fn = pd.method(peers_api[0], backend, P.scale, prefix == 0)
            try:
                fn(0)
                torch.cuda.synchronize()
                methods.append((label, fn, "causal, enable_gqa" if prefix == 0 else "no mask (all keys), enable_gqa"))
            except Exception as e:
                print("   %s refused: %s" % (label, str(e).split("\n")[0][:200]))
    methods.append(("ours again", methods[0][1], "control"))
    graphs = []
    for label, fn, note in methods:
        try:
            graphs.append((label, BA.capture(fn, 1, a.launches, stream)))
        except Exception as e:
            print("   %s: capture failed: %s" % (label, str(e).split("\n")[0]))
            graphs.append((label, None))
            if label.startswith("ours"):
                failures += 1
    times = {label: [] for label, _ in graphs}
    for rnd in range(a.rounds):
        k = rnd % len(graphs)
        for label, gr in graphs[k:] + graphs[:k]:
            if gr is not None:
                times[label].append(BA.time_graph(gr, a.launches, flush, stream))
    del graphs
    torch.cuda.synchronize()
    err1 = sampled_error(P, rows, ref)
    if not (err1 <= bound):
        print("   WRONG after the replays: rel err %.3e > bound %.2e" % (err1, bound))
        failures += 1
    info["ours"] = info["ours again"] = (path, kernel, max(err0, err1))
    base = statistics.median(times["ours"]) if times.get("ours") else float("nan")
    out = []
    for label, fn, note in methods:
        t = times.get(label, [])
        med = statistics.median(t) if t else float("nan")
        tf = fl / (med * 1e-6) / 1e12 if t else float("nan")
        # the ratio taken within each round, then its median: a clock that moves between rounds
        # moves both sides of a round alike (ratio_attn.py)
        t0 = times.get("ours", [])
        paired = statistics.median([x / y for x, y in zip(t, t0)]) if t and len(t) == len(t0) else float("nan")
        row = {"dtype": dname, "geom": "%d/%d/%d" % (H, hkv, d), "tokens": tokens, "batch": batch, "prefix": prefix,
               "bs": a.bs, "window": a.window, "method": label, "median_us": med,
               "min_us": min(t) if t else float("nan"), "max_us": max(t) if t else float("nan"),
               "tflops": tf, "x_ours": med / base if base > 0 else float("nan"), "x_paired": paired,
               "rel_err": info[label][2] if label in info else float("nan"),
               "path": info[label][0] if label in info else "", "kernel": info[label][1] if label in info else "",
               "note": note}
        out.append(row)
        print("   %-11s %10s us [%9s, %9s]  %7s TFLOP/s  x%5s  paired x%6s  %s" % (
            label, BA.fmt(med), BA.fmt(row["min_us"]), BA.fmt(row["max_us"]), BA.fmt(tf, "%.1f"),
            BA.fmt(row["x_ours"]), BA.fmt(paired, "%.4f"), note))
    del P
    torch.cuda.empty_cache()
    return out, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="out/lib/libktrt.so")
    ap.add_argument("--db", default=None)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--geom", default="32/8/128,6/1/256,8/4/256,16/2/256", help="q heads/kv heads/head size")
    ap.add_argument("--tokens", default="4096,32768", help="new tokens a sequence")
    ap.add_argument("--batch", default="1")
    ap.add_argument("--prefix", default="0", help="cached keys before the new tokens (chunked prefill)")
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--window", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--mem-gb", type=float, default=100.0)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--tsv", default="bench_prefill.tsv")
    ap.add_argument("--ab", action="append", default=[], help="NAME=DB: that database's selection timed beside ours")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    BA.check_header()
    geoms = []
    for s in a.geom.split(","):
        parts = [int(x) for x in s.split("/")]
        if len(parts) != 3 or parts[0] % parts[1]:
            sys.exit("--geom: %s is not q_heads/kv_heads/head_size with kv_heads dividing q_heads" % s)
        geoms.append(tuple(parts))
    dev = torch.cuda.get_device_name()
    print("device %s, torch %s; TFLOP/s count only the keys each row sees (the causal half is not counted)" % (
        dev, torch.__version__))
    kt = BA.Ktrt(a.lib, a.db)
    abs_ = []
    for spec in a.ab:
        name, _, db = spec.partition("=")
        if not name or not db or name.startswith("ours") or name in ("cudnn", "flash"):
            sys.exit("--ab %s: want NAME=DB, NAME not ours, cudnn or flash" % spec)
        abs_.append((name, BA.Ktrt(a.lib, db)))
    peers_api = BA.sdpa_backends()
    stream, flush, gen, cpu_gen = BA.timing_setup()
    rows, failed = [], 0
    for dname in a.dtype.split(","):
        if dname not in BA.QTYPE:
            sys.exit("--dtype: %s not one of %s" % (dname, ",".join(BA.QTYPE)))
        for geom in geoms:
            for tokens in BA.ints(a.tokens):
                for batch in BA.ints(a.batch):
                    for prefix in BA.ints(a.prefix):
                        try:
                            r, f = run_row(a, kt, (dname, geom, tokens, batch, prefix), stream, flush, gen, cpu_gen,
                                           peers_api, abs_)
                        except Exception as e:
                            print("%s %s tokens=%d batch=%d prefix=%d: failed: %s" % (dname, geom, tokens, batch,
                                                                                      prefix, e))
                            failed += 1
                            continue
                        rows += r
                        failed += f
    out = os.environ.get("OUT")
    if out and rows:
        cols = list(rows[0].keys())
        with open(os.path.join(out, a.tsv), "w") as f:
            f.write("# device %s; TFLOP/s without the causal half\n" % dev)
            f.write("\t".join(cols) + "\n")
            for row in rows:
                f.write("\t".join(("%.4g" % row[c]) if isinstance(row[c], float) else str(row[c]) for c in cols) + "\n")
    print()
    print("%-9s %-10s %6s %5s %6s | %9s %7s | %9s %7s %6s | %9s %7s %6s | %8s | %s" % (
        "dtype", "geom", "tokens", "batch", "prefix", "ours us", "TFLOP/s", "cudnn us", "TFLOP/s", "cud/us",
        "flash us", "TFLOP/s", "fla/us", "err", "kernel"))
    by = {}
    for row in rows:
        by.setdefault((row["dtype"], row["geom"], row["tokens"], row["batch"], row["prefix"]), {})[row["method"]] = row
    def vs(r):   # the paired ratio where every round timed both, else the medians' ratio
        x = r.get("x_paired", float("nan"))
        return x if isinstance(x, float) and math.isfinite(x) else r.get("x_ours", float("nan"))

    for k, m in by.items():
        o, c, fl = m.get("ours", {}), m.get("cudnn", {}), m.get("flash", {})
        print("%-9s %-10s %6d %5d %6d | %9s %7s | %9s %7s %6s | %9s %7s %6s | %8s | %s" % (
            k[0], k[1], k[2], k[3], k[4], BA.fmt(o.get("median_us", float("nan"))), BA.fmt(o.get("tflops", float("nan")), "%.1f"),
            BA.fmt(c.get("median_us", float("nan"))), BA.fmt(c.get("tflops", float("nan")), "%.1f"),
            BA.fmt(vs(c)), BA.fmt(fl.get("median_us", float("nan"))),
            BA.fmt(fl.get("tflops", float("nan")), "%.1f"), BA.fmt(vs(fl)),
            BA.fmt(o.get("rel_err", float("nan")), "%.2e"), o.get("kernel", "")))
    print("(cud/us, fla/us: the peer's time over ours within each round, the median over the rounds; > 1 = ours faster)")
    print("%d failures (wrong result, refused problem or failed launch)" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
