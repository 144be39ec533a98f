#!/usr/bin/env python3
"""gdn_check.py: ktune's fused GDN decode step (op gdn_decode) through libktrt, chained, against the
float64 per-token recurrence over whole sequences (tests/device/gdn_common.py's Truth).

    python3 tests/device/gdn_check.py [--lib out/lib/libktrt.so] --db FILE [--steps 6] [--seed 1]

Every chain runs in one state pool shared by batches of several sizes (1, 3, 8 and 33 sequences on
disjoint slot sets, interleaved call by call), with padded sequences (slot -1) among them:
  - plain: one token a sequence a step;
  - speculative: 1 to 4 tokens a sequence a step (mixed in one batch), a random accepted prefix
    declared to the next step (num_accepted), resumed; the last step is one token, and after it
    the slot's state and conv history must be the truth's committed ones;
  - both state layouts (vk 0 and 1), both conv-state layouts ([slot][channel][column] and
    vLLM's newer [slot][column][channel]), the gated norm on and off.
Each step's outputs (every live token) against the truth within the bound (bf16 1e-2: the
descriptor's), padded rows still NaN, slots no batch owns bit-identical to their start; at the end
of a chain each live slot's state (fp32) against the truth within 1e-4 and its conv history exact.
The kernel is whatever libktrt selects (the law's pick over the database's kernels where nothing
is tuned): ktrt_choose's kernel and path are printed per chain.

Prints one line a chain and "gdn_check: N chains, F failed"; exit 1 on a failure.

    python3 tests/device/gdn_check.py --self-test [--libkt out/lib/libkt.so]   # CPU only

holds this file's float64 truth (gdn_common.Truth) and bench_gdn.py's PyTorch peer to the C
reference (runtime/gdn_ref.c, through libkt.so) on the CPU, over the same structs the device run
passes: three plain steps of a batch with a padded sequence, both layouts, the norm on and off."""
import argparse
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import KT_OK, Ktrt, header_fields, rel_error  # noqa: E402
from gdn_common import Layer, Step, Truth, check_header, over, worst_of  # noqa: E402

BOUND = {"bf16": 1e-2, "fp16": 2.5e-3}
BATCHES = (1, 3, 8, 33)


def chain(kt, a, dt, vk, ds, norm, spec, gen, rng):
    hk, hv, dk, dv, kw = 2, 4, 128, 128, 4
    slots = sum(BATCHES) + 7
    L = Layer(dt, hk, hv, dk, dv, kw, slots, vk, ds, norm, gen)
    conv0, ssm0, log0 = L.conv.clone(), L.ssm.clone(), L.log.clone()
    order = list(range(slots))
    rng.shuffle(order)
    groups, at = [], 0
    for b in BATCHES:
        s = order[at:at + b]
        at += b
        s = [x if (i % 7 != 5) else -1 for i, x in enumerate(s)]   # every seventh from the sixth padded
        groups.append(s)
    owned = set(x for g in groups for x in g if x >= 0)
    truths = {s: Truth(L.conv_cols(s)[:, :kw - 1], L.state(s)) for s in owned}
    accepted = {s: 0 for s in owned}
    worst, ch_name, ch_path, fails = 0.0, "", "", []
    steps = a.steps
    for st in range(steps):
        last = st == steps - 1
        for g in groups:
            ntok = [1 if (not spec or last) else rng.randint(1, 4) for _ in g]
            acc = [accepted.get(s, 0) for s in g] if spec else None
            step = Step(L, ntok, g, acc, gen)
            rc, ch, err = kt.choose(dt, step.args, op="gdn_decode")
            if rc != KT_OK:
                return False, "refused: " + err
            ch_name, ch_path = ch.kernel.decode(), ch.path.decode()
            kt.run(dt, step.args, op="gdn_decode")
            torch.cuda.synchronize()
            for i, s in enumerate(g):
                rows = step.rows(i)
                if s < 0:
                    if not torch.isnan(step.out[rows].float()).all():
                        fails.append("step %d: a padded sequence's rows were written" % st)
                    continue
                T = truths[s]
                ref = T.run(L, step.qkv[rows], step.ab[0][rows], step.ab[1][rows], step.z[rows], commit=not spec)
                e = rel_error(step.out[rows], ref)
                worst = worst_of(worst, e)
                if over(e, BOUND[dt]):
                    fails.append("step %d slot %d: out error %.2e" % (st, s, e))
                if spec:
                    n = ntok[i]
                    k = rng.randint(1, n) if not last else n
                    T.run(L, step.qkv[rows][:k], step.ab[0][rows][:k], step.ab[1][rows][:k], step.z[rows][:k], commit=True)
                    accepted[s] = k
    # untouched slots
    for s in range(slots):
        if s in owned:
            continue
        if not (torch.equal(L.conv[s], conv0[s]) and torch.equal(L.ssm[s], ssm0[s]) and torch.equal(L.log[s], log0[s])):
            fails.append("slot %d, no sequence's, was written" % s)
    # the state the chain ends in: plain, the slot's; speculative, the last step's entering state (the
    # committed one before its single token, which the truth then committed too: compare before it)
    ws = 0.0
    for s in owned:
        T = truths[s]
        if spec:
            continue
        es = rel_error(L.state(s), T.S)
        ws = worst_of(ws, es)
        hist = L.conv_cols(s)[:, :kw - 1]
        if over(es, 1e-4) or not torch.equal(hist, T.hist):
            fails.append("slot %d: state error %.2e, conv history %s" % (s, es, "exact" if torch.equal(hist, T.hist) else "differs"))
    name = "%s vk%d %s%s %s" % (dt, vk, "ds" if ds else "dc", " norm" if norm else "", "spec" if spec else "plain")
    msg = "%-28s %-6s %-60s out %.2e state %.2e" % (name, ch_path, ch_name, worst, ws)
    if fails:
        msg += "\n    " + "\n    ".join(fails[:8])
    return not fails, msg


def spec_final_state(kt, a, dt, vk, ds, norm, gen, rng):
    """A speculative chain whose final state is read back: after its last step (one token a
    sequence, num_accepted the previous step's acceptance), the slot holds the state entering that
    step, which must equal the truth committed before it."""
    hk, hv, dk, dv, kw = 2, 4, 128, 128, 4
    slots = 12
    L = Layer(dt, hk, hv, dk, dv, kw, slots, vk, ds, norm, gen)
    g = [7, 2, -1, 10, 4]
    owned = [s for s in g if s >= 0]
    truths = {s: Truth(L.conv_cols(s)[:, :kw - 1], L.state(s)) for s in owned}
    accepted = {s: 0 for s in owned}
    fails, worst = [], 0.0
    for st in range(a.steps):
        last = st == a.steps - 1
        ntok = [1 if last else rng.randint(1, 4) for _ in g]
        step = Step(L, ntok, g, [accepted.get(s, 0) for s in g], gen)
        before = {s: (truths[s].S.clone(), truths[s].hist.clone()) for s in owned}
        kt.run(dt, step.args, op="gdn_decode")
        torch.cuda.synchronize()
        for i, s in enumerate(g):
            if s < 0:
                continue
            rows = step.rows(i)
            T = truths[s]
            ref = T.run(L, step.qkv[rows], step.ab[0][rows], step.ab[1][rows], step.z[rows], commit=False)
            e = rel_error(step.out[rows], ref)
            worst = worst_of(worst, e)
            if over(e, BOUND[dt]):
                fails.append("step %d slot %d: out error %.2e" % (st, s, e))
            k = rng.randint(1, ntok[i])
            T.run(L, step.qkv[rows][:k], step.ab[0][rows][:k], step.ab[1][rows][:k], step.z[rows][:k], commit=True)
            accepted[s] = k
        if last:
            for s in owned:
                S0, h0 = before[s]
                es = rel_error(L.state(s), S0)
                hist = L.conv_cols(s)[:, :kw - 1]
                if over(es, 1e-4) or not torch.equal(hist, h0):
                    fails.append("slot %d: entering state error %.2e, conv history %s" % (s, es, "exact" if torch.equal(hist, h0) else "differs"))
    name = "%s vk%d %s%s spec-final" % (dt, vk, "ds" if ds else "dc", " norm" if norm else "")
    msg = "%-28s out %.2e" % (name, worst)
    if fails:
        msg += "\n    " + "\n    ".join(fails[:8])
    return not fails, msg


def self_test(libkt):
    import ctypes
    import gdn_common
    from bench_gdn import torch_step
    gdn_common.DEVICE = "cpu"

    lib = gdn_common.ref_lib(libkt)
    Pools = gdn_common.RefPools
    check_header(header_fields)
    gen = torch.Generator()
    gen.manual_seed(3)
    worst_t, worst_p, failed = 0.0, 0.0, 0
    for vk in (0, 1):
        for ds in (0, 1):
            for norm in (1, 0):
                L = Layer("bf16", 2, 4, 128, 128, 4, 12, vk, ds, norm, gen)
                g = [7, 2, -1, 10, 4]
                truths = {s: Truth(L.conv_cols(s)[:, :3], L.state(s)) for s in g if s >= 0}
                pc, ps, pl = L.conv.double().clone(), L.ssm.double().clone(), L.log.double().clone()
                pools = Pools(pc.data_ptr(), ps.data_ptr(), pl.data_ptr(), vk)
                for st in range(3):
                    step = Step(L, [1] * len(g), g, None, gen)
                    outd = torch.zeros(step.out.shape, dtype=torch.float64)
                    lib.kt_gdn_ref_step(ctypes.byref(step.args), 0, ctypes.byref(pools), outd.data_ptr())
                    if norm and not ds and not vk and st == 0:
                        # the peer over the live sequences' rows (it serves equal-length batches
                        # without padding), on L's own pools
                        live = torch.tensor([i for i, s in enumerate(g) if s >= 0])
                        peer = argparse.Namespace(qkv=step.qkv.index_select(0, live), z=step.z.index_select(0, live),
                                                  ab=step.ab.index_select(1, live),
                                                  out=torch.empty(len(live), step.out.shape[1], dtype=step.out.dtype))
                        torch_step(L, peer, torch.tensor([s for s in g if s >= 0]), 1)
                        peer_rows = {s: k for k, s in enumerate(s for s in g if s >= 0)}
                    for i, s in enumerate(g):
                        if s < 0:
                            continue
                        rows = step.rows(i)
                        ref = truths[s].run(L, step.qkv[rows], step.ab[0][rows], step.ab[1][rows], step.z[rows], commit=True)
                        worst_t = worst_of(worst_t, rel_error(outd[rows], ref))
                        if norm and not ds and not vk and st == 0:
                            k = peer_rows[s]
                            worst_p = worst_of(worst_p, rel_error(peer.out[k:k + 1], ref))
                for s, T in truths.items():
                    S = ps[s].transpose(1, 2) if vk else ps[s]
                    es = rel_error(S, T.S)
                    hist = (pc[s].t() if ds else pc[s])[:, :3]
                    if over(es, 1e-9) or not torch.equal(hist, T.hist):
                        failed += 1
                        print("  FAIL  vk%d ds%d norm%d slot %d: state %.2e, conv history %s" % (
                            vk, ds, norm, s, es, "exact" if torch.equal(hist, T.hist) else "differs"))
    ok = not over(worst_t, 1e-3) and failed == 0 and not over(worst_p, 5e-2)
    print("gdn_check self-test: truth vs the C reference %.2e, the PyTorch peer vs truth %.2e: %s" % (
        worst_t, worst_p, "ok" if ok else "FAILED"))
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
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--vk", default="0,1", help="the state layouts checked (a database of one layout's forms: that one)")
    a = ap.parse_args()
    check_header(header_fields)
    kt = Ktrt(a.lib, a.db)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(a.seed)
    rng = random.Random(a.seed)
    n = failed = 0
    for dt in a.dtype.split(","):
        for vk in [int(x) for x in a.vk.split(",")]:
            for ds in (0, 1):
                for norm in (1, 0):
                    for spec in (0, 1):
                        ok, msg = chain(kt, a, dt, vk, ds, norm, spec, gen, rng)
                        n += 1
                        failed += not ok
                        print(("  ok    " if ok else "  FAIL  ") + msg, flush=True)
                ok, msg = spec_final_state(kt, a, dt, vk, ds, 1, gen, rng)
                n += 1
                failed += not ok
                print(("  ok    " if ok else "  FAIL  ") + msg, flush=True)
    print("gdn_check: %d chains, %d failed" % (n, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
