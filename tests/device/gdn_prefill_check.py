#!/usr/bin/env python3
"""gdn_prefill_check.py: ktune's GDN prefill (op gdn_prefill, three launches) and decode step (op
gdn_decode) through libktrt, chained over one state pool, against the float64 per-token recurrence
over whole sequences (gdn_common.Truth).

    python3 tests/device/gdn_prefill_check.py [--lib out/lib/libktrt.so] --db FILE [--steps 4] [--seed 1]

A chain, at Qwen3-Next's rank geometry (4 key heads, 8 value heads, 128 / 128, conv 4), in a pool of
24 slots:
  1. a prefill of six sequences of lengths none a multiple of any chunk (1, 3, 37, 130, 1000, 2051),
     scattered slots, one without an initial state (zeros, whatever its slot holds), one padded;
  2. a second prefill, of one sequence (333 tokens), on another slot: two batch sizes, one pool;
  3. `--steps` plain decode steps of every live sequence in one batch, then two speculative steps
     (1 to 4 tokens, a random accepted prefix resumed) and a closing one-token speculative step.
Every live output row of every call against the truth (bound 2e-2 in bf16: the chunked form rounds
every product's operands, and the decode steps inherit its state), padded rows still NaN; after the
closing step each live slot holds the state entering it (abi), held to the truth's within 2e-2, its
conv history exact; slots no sequence owns bit-identical.
Both state layouts (vk 0, 1), both conv-state layouts, the gated norm on and off. The kernel is
whatever libktrt selects for each call (the law's pick where nothing is tuned): printed per chain.

Prints one line a chain and "gdn_prefill_check: N chains, F failed"; exit 1 on a failure.

    python3 tests/device/gdn_prefill_check.py --self-test [--libkt out/lib/libkt.so]   # CPU only

holds this file's prefill struct and truth to the C reference (runtime/gdn_ref.c) on the CPU."""
import argparse
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import KT_OK, Ktrt, header_fields, rel_error  # noqa: E402
from gdn_common import Layer, Prefill, Step, Truth, check_header, over, worst_of  # noqa: E402

# the chunked form rounds every product's operands to the dtype; the decode steps after it inherit
# its state, so their outputs are held to the same bound
BOUND = {"bf16": 2e-2, "fp16": 5e-3}
BOUND_STATE = 2e-2
LENS = [1, 37, 3, 130, 1000, 5, 2051]
INIT = [1, 1, 1, 0, 1, 1, 1]
PADDED = 5                 # LENS[5] is a padded sequence


def chain(kt, a, dt, vk, ds, norm, gen, rng):
    hk, hv, dk, dv, kw = 4, 8, 128, 128, 4
    slots = 24
    L = Layer(dt, hk, hv, dk, dv, kw, slots, vk, ds, norm, gen)
    conv0, ssm0 = L.conv.clone(), L.ssm.clone()
    order = list(range(slots))
    rng.shuffle(order)
    g1 = [order[i] if i != PADDED else -1 for i in range(len(LENS))]
    g2 = [order[len(LENS)]]
    owned = [s for s in g1 + g2 if s >= 0]
    init = dict(zip(g1, INIT))
    init[g2[0]] = 1
    truths = {}
    for s in owned:
        if init[s]:
            truths[s] = Truth(L.conv_cols(s)[:, :kw - 1], L.state(s))
        else:
            truths[s] = Truth(torch.zeros_like(L.conv_cols(s)[:, :kw - 1]), torch.zeros_like(L.state(s)))
    fails, wp, wd, picks = [], 0.0, 0.0, []

    for g, lens, ini in ((g1, LENS, INIT), (g2, [333], [1])):
        pf = Prefill(L, lens, g, ini, gen)
        rc, ch, err = kt.choose(dt, pf.args, op="gdn_prefill")
        if rc != KT_OK:
            return False, "prefill refused: " + err
        picks.append("%s %s" % (ch.path.decode(), ch.kernel.decode()))
        kt.run(dt, pf.args, op="gdn_prefill")
        torch.cuda.synchronize()
        for i, s in enumerate(g):
            rows = pf.rows(i)
            if s < 0:
                if not torch.isnan(pf.out[rows].float()).all():
                    fails.append("prefill: a padded sequence's rows were written")
                continue
            ref = truths[s].run(L, pf.qkv[rows], pf.ab[0][rows], pf.ab[1][rows], pf.z[rows], commit=True)
            e = rel_error(pf.out[rows], ref)
            wp = worst_of(wp, e)
            if over(e, BOUND[dt]):
                fails.append("prefill slot %d (%d tokens): out error %.2e" % (s, lens[i], e))

    batch = g1 + g2
    accepted = {s: 0 for s in owned}
    # plain steps, then speculative ones (1 to 4 tokens, a random accepted prefix resumed), closed by a
    # one-token speculative step: after it a slot holds the state entering it (abi), the truth's
    # committed state before it
    plan = ["plain"] * a.steps + ["spec", "spec", "close"]
    before = {}
    for st, kind in enumerate(plan):
        spec = kind != "plain"
        ntok = [rng.randint(1, 4) if kind == "spec" else 1 for _ in batch]
        step = Step(L, ntok, batch, [accepted.get(s, 0) for s in batch] if spec else None, gen)
        rc, ch, err = kt.choose(dt, step.args, op="gdn_decode")
        if rc != KT_OK:
            return False, "decode refused: " + err
        if kind == "close":
            before = {s: (truths[s].S.clone(), truths[s].hist.clone()) for s in owned}
        kt.run(dt, step.args, op="gdn_decode")
        torch.cuda.synchronize()
        for i, s in enumerate(batch):
            rows = step.rows(i)
            if s < 0:
                if not torch.isnan(step.out[rows].float()).all():
                    fails.append("decode step %d: a padded sequence's rows were written" % st)
                continue
            T = truths[s]
            ref = T.run(L, step.qkv[rows], step.ab[0][rows], step.ab[1][rows], step.z[rows], commit=not spec)
            e = rel_error(step.out[rows], ref)
            wd = worst_of(wd, e)
            if over(e, BOUND[dt]):
                fails.append("decode step %d (%s) slot %d: out error %.2e" % (st, kind, s, e))
            if spec:
                k = rng.randint(1, ntok[i])
                T.run(L, step.qkv[rows][:k], step.ab[0][rows][:k], step.ab[1][rows][:k], step.z[rows][:k], commit=True)
                accepted[s] = k
    picks.append("%s %s" % (ch.path.decode(), ch.kernel.decode()))

    ws = 0.0
    for s in owned:
        S0, h0 = before[s]
        es = rel_error(L.state(s), S0)
        ws = worst_of(ws, es)
        hist = L.conv_cols(s)[:, :kw - 1]
        if over(es, BOUND_STATE) or not torch.equal(hist, h0):
            fails.append("slot %d: state error %.2e, conv history %s" % (s, es, "exact" if torch.equal(hist, h0) else "differs"))
    for s in range(slots):
        if s not in owned and not (torch.equal(L.conv[s], conv0[s]) and torch.equal(L.ssm[s], ssm0[s])):
            fails.append("slot %d, no sequence's, was written" % s)
    name = "%s vk%d %s%s" % (dt, vk, "ds" if ds else "dc", " norm" if norm else "")
    msg = "%-20s prefill %.2e decode %.2e state %.2e  [%s]" % (name, wp, wd, ws, "; ".join(picks))
    if fails:
        msg += "\n    " + "\n    ".join(fails[:8])
    return not fails, msg


def self_test(libkt):
    """On the CPU: this file's Prefill struct and truth against the C reference (runtime/gdn_ref.c's
    kt_gdn_ref_prefill through libkt.so), one prefill of a mixed batch, both layouts."""
    import ctypes
    import gdn_common
    gdn_common.DEVICE = "cpu"

    lib = gdn_common.ref_lib(libkt)
    Pools = gdn_common.RefPools
    check_header(header_fields)
    gen = torch.Generator()
    gen.manual_seed(5)
    worst, failed = 0.0, 0
    for vk in (0, 1):
        for ds in (0, 1):
            L = Layer("bf16", 2, 4, 128, 128, 4, 10, vk, ds, 1, gen)
            g, lens, ini = [7, -1, 2, 4], [5, 3, 70, 1], [1, 1, 0, 1]
            truths = {}
            for s, i0 in zip(g, ini):
                if s >= 0:
                    h, S = L.conv_cols(s)[:, :3], L.state(s)
                    truths[s] = Truth(h if i0 else torch.zeros_like(h), S if i0 else torch.zeros_like(S))
            pf = Prefill(L, lens, g, ini, gen)
            pc, ps = L.conv.double().clone(), L.ssm.double().clone()
            pools = Pools(pc.data_ptr(), ps.data_ptr(), None, vk)
            outd = torch.zeros(pf.out.shape, dtype=torch.float64)
            lib.kt_gdn_ref_prefill(ctypes.byref(pf.args), L.L, 0, ctypes.byref(pools), outd.data_ptr())
            for i, s in enumerate(g):
                if s < 0:
                    continue
                rows = pf.rows(i)
                ref = truths[s].run(L, pf.qkv[rows], pf.ab[0][rows], pf.ab[1][rows], pf.z[rows], commit=True)
                worst = worst_of(worst, rel_error(outd[rows], ref))
                S = ps[s].transpose(1, 2) if vk else ps[s]
                hist = (pc[s].t() if ds else pc[s])[:, :3]
                es = rel_error(S, truths[s].S)
                if over(es, 1e-9) or not torch.equal(hist, truths[s].hist):
                    failed += 1
                    print("  FAIL  vk%d ds%d slot %d: state %.2e, conv history %s" % (
                        vk, ds, s, es, "exact" if torch.equal(hist, truths[s].hist) else "differs"))
    ok = not over(worst, 1e-3) and failed == 0
    print("gdn_prefill_check self-test: truth vs the C reference %.2e: %s" % (worst, "ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    if "--self-test" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--self-test", action="store_true")
        ap.add_argument("--libkt", default="out/lib/libkt.so")
        return self_test(ap.parse_args().libkt)
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="out/lib/libktrt.so")
    ap.add_argument("--db", required=True)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", default="bf16")
    a = ap.parse_args()
    check_header(header_fields)
    kt = Ktrt(a.lib, a.db)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(a.seed)
    rng = random.Random(a.seed)
    n = failed = 0
    for dt in a.dtype.split(","):
        for vk in (0, 1):
            for ds in (0, 1):
                for norm in (1, 0):
                    ok, msg = chain(kt, a, dt, vk, ds, norm, gen, rng)
                    n += 1
                    failed += not ok
                    print(("  ok    " if ok else "  FAIL  ") + msg, flush=True)
    print("gdn_prefill_check: %d chains, %d failed" % (n, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
