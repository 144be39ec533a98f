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

Prints one line a chain and "gdn_check: N chains, F failed"; exit 1 on a failure."""
import argparse
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import KT_OK, Ktrt, header_fields  # noqa: E402
from gdn_common import Layer, Step, Truth, check_header, rel_error  # noqa: E402

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
                worst = max(worst, e)
                if e > BOUND[dt]:
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
        ws = max(ws, es)
        hist = L.conv_cols(s)[:, :kw - 1]
        if es > 1e-4 or not torch.equal(hist, T.hist):
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
            worst = max(worst, e)
            if e > BOUND[dt]:
                fails.append("step %d slot %d: out error %.2e" % (st, s, e))
            k = rng.randint(1, ntok[i])
            T.run(L, step.qkv[rows][:k], step.ab[0][rows][:k], step.ab[1][rows][:k], step.z[rows][:k], commit=True)
            accepted[s] = k
        if last:
            for s in owned:
                S0, h0 = before[s]
                es = rel_error(L.state(s), S0)
                hist = L.conv_cols(s)[:, :kw - 1]
                if es > 1e-4 or not torch.equal(hist, h0):
                    fails.append("slot %d: entering state error %.2e, conv history %s" % (s, es, "exact" if torch.equal(hist, h0) else "differs"))
    name = "%s vk%d %s%s spec-final" % (dt, vk, "ds" if ds else "dc", " norm" if norm else "")
    msg = "%-28s out %.2e" % (name, worst)
    if fails:
        msg += "\n    " + "\n    ".join(fails[:8])
    return not fails, msg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="out/lib/libktrt.so")
    ap.add_argument("--db", required=True)
    ap.add_argument("--steps", type=int, default=6)
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
