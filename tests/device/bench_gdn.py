#!/usr/bin/env python3
"""bench_gdn.py: ktune's fused GDN decode step (op gdn_decode) through libktrt, graph-timed, against
a plain PyTorch implementation of the same math (the floor the issue names) and the state-traffic
ceilings measured in the same run.

    python3 tests/device/bench_gdn.py --db FILE [--lib out/lib/libktrt.so] [--hv 8,32] [--batch 1,8,32,128]
        [--tokens 1,4] [--regime hot,cold] [--rounds 15] [--launches 20] [--ab DB2] [--norm 0]

Rows: value heads hv (key heads hv/2), dk = dv = 128, the gated norm on (--norm 0: off), bf16, the state [.., K, V]
fp32; tokens 1 is a plain step, tokens 4 a speculative one replaying 2 logged tokens (a mean
acceptance) before its 4. Every sequence's tokens are equal within a row.
Regimes: hot replays one set (the state of batch x hv heads stays in L2 where it fits: the serving
regime of a small batch, and the seed's GDN measure), cold rotates sets whose states together pass
twice the L2 and flushes L2 before each replay (a large batch in serving: 36 layers of state).
Each method is a CUDA graph of --launches launches, replayed between events; rounds interleave ours,
ours again (the control: its ratio to ours is the noise floor) and torch's, in rotated order;
median, min and max of the time a launch. Correctness first: ours against the float64 truth of
gdn_common.py on the first set (bound 1e-2), and torch's against the same.
The ceilings line adds the launch floor: a graph of one-element kernels, a launch each (what a step
costs before its kernel does anything). --profile: each hot row's kernel device time (torch.profiler).
Columns: us a launch, the state's bytes in and out (2 x batch x hv x 64 KiB, the log's and the
conv state's besides) as GB/s and as % of the copy ceiling (read + write bytes, measured here)
and of the read ceiling; torch's time and ours/torch. --ab DB2: a second runtime on DB2 (its law's
pick) checked and timed in the same rounds as a fourth graph: its us and its time over ours (a change
between two databases read against the same run's control). With $OUT set, writes
$OUT/bench_gdn.tsv."""
import argparse
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import KT_OK, L2_BYTES, Ktrt, capture, header_fields, launch_floor_us, rel_error, time_graph  # noqa: E402
from bench_common import copy_ceiling_gbs, print_kernel_times, read_ceiling_gbs  # noqa: E402
from gdn_common import Layer, Step, Truth, check_header, over, worst_of  # noqa: E402


def torch_step(L, st, idx, n):
    """The same step in plain PyTorch over equal-length sequences (n tokens each), state gathered by
    slot and scattered back: the floor the issue compares against. Returns out [batch*n][hv*dv]."""
    B = idx.shape[0]
    conv = L.conv.index_select(0, idx)                                  # [B][cdim][L] (dc layout)
    hist = conv[:, :, :L.kw - 1].float()
    x = st.qkv.view(B, n, L.cdim).float().transpose(1, 2)               # [B][cdim][n]
    E = torch.cat([hist, x], dim=2)
    w = L.conv_w.float()
    y = sum(w[None, :, j:j + 1] * E[:, :, j:j + n] for j in range(L.kw))
    y = F.silu(y).to(L.conv.dtype).float().transpose(1, 2)             # [B][n][cdim]
    new = torch.zeros_like(conv)
    new[:, :, :L.kw - 1] = E[:, :, n:n + L.kw - 1].to(conv.dtype)
    L.conv.index_copy_(0, idx, new)
    hkd = L.hk * L.dk
    ratio = L.hv // L.hk
    q = F.normalize(y[..., :hkd].view(B, n, L.hk, L.dk), dim=-1, eps=1e-6) * L.scale
    k = F.normalize(y[..., hkd:2 * hkd].view(B, n, L.hk, L.dk), dim=-1, eps=1e-6)
    v = y[..., 2 * hkd:].view(B, n, L.hv, L.dv)
    q = q.repeat_interleave(ratio, 2)
    k = k.repeat_interleave(ratio, 2)
    a, b = st.ab[0].view(B, n, L.hv).float(), st.ab[1].view(B, n, L.hv).float()
    g = -torch.exp(L.A_log) * F.softplus(a + L.dt_bias, threshold=20.0)
    beta = torch.sigmoid(b)
    S = L.ssm.index_select(0, idx)                                      # [B][hv][dk][dv]
    if L.vk:                                                            # stored [B][hv][dv][dk]
        S = S.transpose(2, 3)
    outs = []
    for t in range(n):
        S = S * torch.exp(g[:, t])[..., None, None]
        kv = torch.einsum("bhij,bhi->bhj", S, k[:, t])
        d = beta[:, t, :, None] * (v[:, t] - kv)
        S = S + k[:, t, :, :, None] * d[:, :, None, :]
        outs.append(torch.einsum("bhij,bhi->bhj", S, q[:, t]))
    L.ssm.index_copy_(0, idx, S.transpose(2, 3).contiguous() if L.vk else S)
    o = torch.stack(outs, 1).to(st.out.dtype).float()                   # [B][n][hv][dv]
    out = o.to(st.out.dtype)
    if L.norm:
        r = torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + 1e-6)
        z = st.z.view(B, n, L.hv, L.dv).float()
        out = (o * r * L.norm_w.float() * F.silu(z)).to(st.out.dtype)
    st.out.copy_(out.view(B * n, -1))


def row(kt, kt_ab, a, hv, batch, tokens, regime, gen, ceil_copy, ceil_read, stream, flush):
    dt, hk = "bf16", hv // 2
    head_bytes = 128 * 128 * 4
    per_set = batch * hv * head_bytes
    nsets = 1 if regime == "hot" else min(64, 2 * L2_BYTES // per_set + 2)
    L = Layer(dt, hk, hv, 128, 128, 4, batch * nsets, a.vk, 0, a.norm, gen)
    spec = tokens > 1
    steps, idxs = [], []
    for s in range(nsets):
        slots = list(range(s * batch, (s + 1) * batch))
        steps.append(Step(L, [tokens] * batch, slots, [2] * batch if spec else None, gen))
        idxs.append(torch.tensor(slots, dtype=torch.long, device="cuda"))
    # correctness on set 0: ours, then torch's, each from the same starting pools
    st0 = steps[0]
    start = (L.conv.clone(), L.ssm.clone(), L.log.clone())
    truths = []
    for i, s in enumerate(range(batch)):
        T = Truth(L.conv_cols(s)[:, :3], L.state(s))
        truths.append(T)
    rc, ch, err = kt.choose(dt, st0.args, op="gdn_decode")
    if rc != KT_OK:
        return None, "refused: " + err
    ab_kernel = ""
    if kt_ab:
        rc, ch_ab, err = kt_ab.choose(dt, st0.args, op="gdn_decode")
        if rc != KT_OK:
            return None, "--ab refused: " + err
        ab_kernel = ch_ab.kernel.decode()
    if spec:
        err_ours = float("nan")   # a replayed log is not the truth's state: checked by gdn_check.py
    else:
        kt.run(dt, st0.args, op="gdn_decode")
        torch.cuda.synchronize()
        ref = torch.cat([truths[i].run(L, st0.qkv[st0.rows(i)], st0.ab[0][st0.rows(i)], st0.ab[1][st0.rows(i)],
                                       st0.z[st0.rows(i)], commit=False) for i in range(batch)])
        err_ours = rel_error(st0.out, ref)
        L.conv.copy_(start[0]); L.ssm.copy_(start[1]); L.log.copy_(start[2])
        if kt_ab:
            kt_ab.run(dt, st0.args, op="gdn_decode")
            torch.cuda.synchronize()
            err_ab = rel_error(st0.out, ref)
            L.conv.copy_(start[0]); L.ssm.copy_(start[1]); L.log.copy_(start[2])
            if over(err_ab, 1e-2):
                return None, "wrong: --ab %.2e" % err_ab
        torch_step(L, st0, idxs[0], tokens)
        err_torch = rel_error(st0.out, ref)
        L.conv.copy_(start[0]); L.ssm.copy_(start[1]); L.log.copy_(start[2])
        if over(err_ours, 1e-2) or over(err_torch, 5e-2):
            return None, "wrong: ours %.2e torch %.2e" % (err_ours, err_torch)

    def ours(i):
        kt.run(dt, steps[i].args, op="gdn_decode")

    def peer(i):
        torch_step(L, steps[i], idxs[i], tokens)

    def other(i):
        kt_ab.run(dt, steps[i].args, op="gdn_decode")

    n = a.launches
    graphs = {"ours": capture(ours, nsets, n, stream), "ours again": capture(ours, nsets, n, stream),
              "torch": capture(peer, nsets, n, stream)}
    if kt_ab:
        graphs["ab"] = capture(other, nsets, n, stream)
    names = list(graphs)
    times = {k: [] for k in names}
    for r in range(a.rounds):
        for j in range(len(names)):
            k = names[(r + j) % len(names)]
            if regime == "hot":
                with torch.cuda.stream(stream):
                    graphs[k].replay()          # warm: the set's state resident before the timed replay
            times[k].append(time_graph(graphs[k], n, flush if regime == "cold" else torch.empty(0, device="cuda"), stream))
    med = {k: statistics.median(v) for k, v in times.items()}
    if a.profile and regime == "hot":
        print_kernel_times("%d/%d/%d" % (hv, batch, tokens), lambda: ours(0), stream)
    state_bytes = 2 * per_set + (batch * hv * (2 + tokens) * 128 * 2 * 4 if spec else 0)
    gbs = state_bytes / (med["ours"] * 1e-6) / 1e9
    return {"hv": hv, "batch": batch, "tokens": tokens, "regime": regime, "kernel": ch.kernel.decode(),
            "path": ch.path.decode(), "us": med["ours"], "us_min": min(times["ours"]), "us_max": max(times["ours"]),
            "control": med["ours again"] / med["ours"], "torch_us": med["torch"], "x_torch": med["torch"] / med["ours"],
            "gbs": gbs, "pct_copy": 100 * gbs / ceil_copy, "pct_read": 100 * gbs / ceil_read, "err": err_ours,
            "ab_us": med.get("ab", float("nan")), "ab_x": med.get("ab", float("nan")) / med["ours"],
            "ab_kernel": ab_kernel}, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="out/lib/libktrt.so")
    ap.add_argument("--db", required=True)
    ap.add_argument("--hv", default="8,32")
    ap.add_argument("--batch", default="1,8,32,128")
    ap.add_argument("--tokens", default="1,4")
    ap.add_argument("--regime", default="hot,cold")
    ap.add_argument("--vk", type=int, default=1, choices=(0, 1),
                    help="the state layout: 1 K-last (vLLM's since #33291, a model's default), 0 [.., K, V]")
    ap.add_argument("--norm", type=int, default=1, choices=(0, 1),
                    help="the gated norm (vLLM's Qwen3-Next has it); 0: the step without it (its own problem key)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--launches", type=int, default=20)
    ap.add_argument("--profile", action="store_true", help="hot rows: our kernel's device time (torch.profiler)")
    ap.add_argument("--ab", default="", help="a second database, timed beside --db's in the same rounds")
    a = ap.parse_args()
    check_header(header_fields)
    print("state layout: vk=%d (%s)" % (a.vk, "K-last" if a.vk else "[.., K, V]"))
    kt = Ktrt(a.lib, a.db)
    kt_ab = Ktrt(a.lib, a.ab) if a.ab else None
    gen = torch.Generator(device="cuda")
    gen.manual_seed(7)
    stream = torch.cuda.Stream()
    flush = torch.empty(2 * L2_BYTES, dtype=torch.uint8, device="cuda")
    ceil_copy, ceil_read = copy_ceiling_gbs(), read_ceiling_gbs()
    print("ceilings: copy %.0f GB/s, read %.0f GB/s; launch floor %.2f us (a graph of %d one-element kernels)" % (
        ceil_copy, ceil_read, launch_floor_us(stream, a.launches), a.launches))
    cols = ["hv", "batch", "tokens", "regime", "us", "us_min", "us_max", "control", "gbs", "pct_copy", "pct_read",
            "torch_us", "x_torch", "err", "path", "kernel", "ab_us", "ab_x", "ab_kernel"]
    lines, failed = ["\t".join(cols)], 0
    print("%3s %5s %3s %5s %9s %17s %7s %8s %6s %6s %9s %7s" % ("hv", "batch", "tok", "reg", "us", "min-max", "ctrl",
                                                             "GB/s", "%copy", "%read", "torch us", "x"))
    for hv in [int(x) for x in a.hv.split(",")]:
        for batch in [int(x) for x in a.batch.split(",")]:
            for tokens in [int(x) for x in a.tokens.split(",")]:
                for regime in a.regime.split(","):
                    r, why = row(kt, kt_ab, a, hv, batch, tokens, regime, gen, ceil_copy, ceil_read, stream, flush)
                    if r is None:
                        failed += 1
                        print("%3d %5d %3d %5s  %s" % (hv, batch, tokens, regime, why))
                        continue
                    print("%3d %5d %3d %5s %9.2f %8.2f-%8.2f %7.3f %8.0f %6.1f %6.1f %9.2f %7.2f" % (
                        hv, batch, tokens, regime, r["us"], r["us_min"], r["us_max"], r["control"], r["gbs"],
                        r["pct_copy"], r["pct_read"], r["torch_us"], r["x_torch"]), flush=True)
                    if kt_ab:
                        print("    --ab %9.2f us, %.3fx ours (%s against %s)" % (r["ab_us"], r["ab_x"], r["ab_kernel"],
                                                                            r["kernel"]), flush=True)
                    lines.append("\t".join(str(r[c]) for c in cols))
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "bench_gdn.tsv"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
