#!/usr/bin/env python3
"""bench_gdn_prefill.py: ktune's GDN prefill (op gdn_prefill: prep, the serial state pass, out)
through libktrt, graph-timed, against a plain PyTorch implementation of the same chunked math (the
floor the issue names), with a copy of the call's input bytes as the run's control.

    python3 tests/device/bench_gdn_prefill.py --db FILE [--lib out/lib/libktrt.so]
        [--rows 1x4096/8,1x16384/8,...] [--rounds 7] [--launches 3] [--ab DB2 | --ab-parts N | --ab-env NAME=VALUE] [--fla DIR]

A row SxT/HV: S sequences of T tokens each, HV value heads (key heads HV/2), dk = dv = 128, conv 4,
the gated norm on, bf16, the state [.., K, V] fp32, every sequence continuing its slot's state.
The default rows are the issue's: one sequence of 4K, 16K and 64K tokens at 8 and 16 value heads,
and 8 x 2K. Correctness first, on the row's own call: ours against torch's (the same math in fp32,
bound 2e-2) and, up to 4K tokens, both against the float64 per-token truth (gdn_common.Truth).
Each method is a CUDA graph of --launches calls replayed between events; rounds interleave ours,
ours again (the control: its ratio to ours is the noise floor), torch's and the copy in rotated
order; median, min and max. --profile adds each of our kernels' device time (torch.profiler).
Columns: ms a call, tokens/s, ours / the bar where the issue sets one,
torch's ms and torch / ours. --ab DB2: a second runtime on DB2 (its law's pick), checked against
torch's like ours and timed in the same rounds: its ms and its time over ours, printed under the
row. --ab-parts N: the same, for ours with the plan cut into N parts (KT_GDNP_PARTS; 1: none) against
the law's count; --ab-env NAME=VALUE, for ours with a plan knob set (KT_GDNP_WY_PARTS=0: wy whole). --fla DIR: flash-linear-attention's chunked gated delta rule (Triton; DIR holds its fla/ source)
from the same states, its output through our gated norm held to torch's, timed in the same rounds
(without the conv and the norm: a floor on the peer; peer_fla.py). With $OUT set, writes
$OUT/bench_gdn_prefill.tsv."""
import argparse
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import KT_OK, Ktrt, capture, header_fields, rel_error, time_graph  # noqa: E402
from bench_common import print_kernel_times  # noqa: E402
from gdn_common import Layer, Prefill, Truth, check_header, over  # noqa: E402
import peer_fla  # noqa: E402

# the bars (ms), one sequence at the value heads and tokens named
BARS = {(1, 16384, 8): 0.30, (1, 65536, 8): 1.1, (1, 16384, 16): 0.40}
DEFAULT_ROWS = "1x4096/8,1x16384/8,1x65536/8,1x4096/16,1x16384/16,1x65536/16,8x2048/8,8x2048/16"


def conv_silu(L, pf, idx, S, n):
    """The causal conv with each slot's history and SiLU, rounded to the activations' dtype:
    (y [S][n][cdim], the slots' new conv states [S][cdim][L]); L.conv is not written."""
    kw = L.kw
    conv = L.conv.index_select(0, idx)                                   # [S][cdim][L] (dc layout)
    hist = conv[:, :, :kw - 1].float()
    x = pf.qkv.view(S, n, L.cdim).float().transpose(1, 2)                # [S][cdim][n]
    E = torch.cat([hist, x], dim=2)
    w = L.conv_w.float()
    y = sum(w[None, :, j:j + 1] * E[:, :, j:j + n] for j in range(kw))
    new = conv.clone()
    new[:, :, :kw - 1] = E[:, :, n:n + kw - 1].to(conv.dtype)
    return F.silu(y).to(L.conv.dtype).transpose(1, 2), new


def gated_norm(L, pf, o, S, n):
    """The output's gated RMSNorm: o [S][n][hv][dv] (any float) -> [S * n][hv * dv] in out's dtype"""
    o = o.to(pf.out.dtype).float()
    r = torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + 1e-6)
    z = pf.z.view(S, n, L.hv, L.dv).float()
    return (o * r * L.norm_w.float() * F.silu(z)).to(pf.out.dtype).reshape(S * n, -1)


def torch_prefill(L, pf, idx, S, n, bt=64):
    """The chunked form in plain PyTorch (fp32), S sequences of n tokens each on slots idx: conv with
    the slot's history, norms, gates, (I + A)^-1 by a triangular solve, w and u, the chunks' state
    pass in a Python loop, the output and the gated norm; the slots' states and conv histories
    written back. Writes pf.out."""
    hk, hv, dk, dv = L.hk, L.hv, L.dk, L.dv
    y, new = conv_silu(L, pf, idx, S, n)
    y = y.float()
    L.conv.index_copy_(0, idx, new)
    hkd = hk * dk
    q = F.normalize(y[..., :hkd].view(S, n, hk, dk), dim=-1, eps=1e-6) * L.scale
    k = F.normalize(y[..., hkd:2 * hkd].view(S, n, hk, dk), dim=-1, eps=1e-6)
    v = y[..., 2 * hkd:].view(S, n, hv, dv)
    q = q.repeat_interleave(hv // hk, 2).transpose(1, 2)                # [S][hv][n][dk]
    k = k.repeat_interleave(hv // hk, 2).transpose(1, 2)
    v = v.transpose(1, 2)
    a, b = pf.ab[0].view(S, n, hv).float(), pf.ab[1].view(S, n, hv).float()
    g = (-torch.exp(L.A_log) * F.softplus(a + L.dt_bias, threshold=20.0)).transpose(1, 2)   # [S][hv][n]
    beta = torch.sigmoid(b).transpose(1, 2)
    pad = (-n) % bt
    if pad:
        q, k, v = (F.pad(t, (0, 0, 0, pad)) for t in (q, k, v))
        g, beta = F.pad(g, (0, pad)), F.pad(beta, (0, pad))
    nc = (n + pad) // bt
    q, k, v = (t.view(S, hv, nc, bt, -1) for t in (q, k, v))
    g, beta = g.view(S, hv, nc, bt), beta.view(S, hv, nc, bt)
    G = g.cumsum(-1)
    low = torch.tril(torch.ones(bt, bt, dtype=torch.bool, device=q.device), -1)
    A = (beta[..., None] * torch.exp(G[..., :, None] - G[..., None, :]) * (k @ k.transpose(-1, -2))).masked_fill(~low, 0)
    eye = torch.eye(bt, device=q.device).expand_as(A)
    X = torch.linalg.solve_triangular(eye + A, eye, upper=False, unitriangular=True)
    u = X @ (beta[..., None] * v)
    wk = X @ (beta[..., None] * torch.exp(G)[..., None] * k)
    causal = torch.tril(torch.ones(bt, bt, dtype=torch.bool, device=q.device))
    P = ((q @ k.transpose(-1, -2)) * torch.exp(G[..., :, None] - G[..., None, :])).masked_fill(~causal, 0)
    St = L.ssm.index_select(0, idx)                                      # [S][hv][dk][dv]
    o = torch.empty_like(v)
    for c in range(nc):
        vn = u[:, :, c] - wk[:, :, c] @ St
        o[:, :, c] = (q[:, :, c] * torch.exp(G[:, :, c])[..., None]) @ St + P[:, :, c] @ vn
        gl = G[:, :, c, -1]
        St = St * torch.exp(gl)[..., None, None] + (k[:, :, c] * torch.exp(gl[..., None] - G[:, :, c])[..., None]).transpose(-1, -2) @ vn
    L.ssm.index_copy_(0, idx, St)
    pf.out.copy_(gated_norm(L, pf, o.view(S, hv, nc * bt, dv)[:, :, :n].transpose(1, 2), S, n))


def row(kt, kt_ab, fla, a, S, n, hv, gen, stream):
    dt, hk = "bf16", hv // 2
    L = Layer(dt, hk, hv, 128, 128, 4, S, 0, 0, 1, gen)
    slots = list(range(S))
    idx = torch.tensor(slots, dtype=torch.long, device="cuda")
    pf = Prefill(L, [n] * S, slots, [1] * S, gen)
    rc, ch, err = kt.choose(dt, pf.args, op="gdn_prefill")
    if rc != KT_OK:
        return None, "refused: " + err
    start = (L.conv.clone(), L.ssm.clone())
    truths = [Truth(L.conv_cols(s)[:, :3], L.state(s)) for s in slots] if S * n <= 4096 else None
    with torch.cuda.stream(stream):   # the stream the graphs capture on: libktrt's one workspace slot binds to it
        kt.run(dt, pf.args, op="gdn_prefill")
    torch.cuda.synchronize()
    ours_out, ours_ssm = pf.out.clone(), L.ssm.clone()
    L.conv.copy_(start[0]); L.ssm.copy_(start[1])
    torch_prefill(L, pf, idx, S, n)
    torch.cuda.synchronize()
    peer_out, peer_ssm = pf.out.clone(), L.ssm.clone()   # torch's, from the start (--ab is held to them)
    err_peer = rel_error(ours_out, pf.out.double())
    err_state = rel_error(ours_ssm, L.ssm.double())
    err_truth = float("nan")
    if truths:
        ref = torch.cat([truths[i].run(L, pf.qkv[pf.rows(i)], pf.ab[0][pf.rows(i)], pf.ab[1][pf.rows(i)],
                                       pf.z[pf.rows(i)], commit=False) for i in range(S)])
        err_truth = max(rel_error(ours_out, ref), rel_error(pf.out, ref))
    L.conv.copy_(start[0]); L.ssm.copy_(start[1])
    if over(err_peer, 2e-2) or over(err_state, 2e-2) or over(err_truth if truths else 0.0, 2e-2):
        return None, "wrong: ours vs torch out %.2e state %.2e, vs truth %.2e" % (err_peer, err_state, err_truth)
    ab_kernel, err_ab = "", float("nan")
    if kt_ab:
        rc, ch_ab, err = kt_ab.choose(dt, pf.args, op="gdn_prefill")
        if rc != KT_OK:
            return None, "--ab refused: " + err
        ab_kernel = ch_ab.kernel.decode()
        with torch.cuda.stream(stream):
            kt_ab.run(dt, pf.args, op="gdn_prefill")
        torch.cuda.synchronize()
        err_ab = max(rel_error(pf.out, peer_out.double()), rel_error(L.ssm, peer_ssm.double()))
        L.conv.copy_(start[0]); L.ssm.copy_(start[1])
        if over(err_ab, 2e-2):
            return None, "wrong: --ab vs torch %.2e" % err_ab
    fla_call, err_fla = None, float("nan")
    if fla:   # fla from the same start, its output through our gated norm, held to torch's like ours
        y, _ = conv_silu(L, pf, idx, S, n)
        fla_call = peer_fla.Problem(fla, L, pf, y, L.ssm.index_select(0, idx), S, n)
        o, ht = fla_call()
        torch.cuda.synchronize()
        err_fla = max(rel_error(gated_norm(L, pf, o, S, n), peer_out.double()),
                      rel_error(ht, peer_ssm.index_select(0, idx).double()))
        if over(err_fla, 2e-2):
            return None, "wrong: fla vs torch %.2e (the peer computes another problem)" % err_fla

    src = pf.qkv_full
    dst = torch.empty_like(src)

    def ours(i):
        kt.run(dt, pf.args, op="gdn_prefill")

    def peer(i):
        torch_prefill(L, pf, idx, S, n)

    def copy(i):
        dst.copy_(src)

    def other(i):
        kt_ab.run(dt, pf.args, op="gdn_prefill")

    m = a.launches
    graphs = {"ours": capture(ours, 1, m, stream), "ours again": capture(ours, 1, m, stream),
              "copy": capture(copy, 1, m, stream)}
    if kt_ab:
        graphs["ab"] = capture(other, 1, m, stream)
    fns = {"torch": peer, "fla": fla_call}
    hows = {}
    for k in [k for k in fns if fns[k]]:
        try:
            graphs[k] = capture(fns[k], 1, 1 if k == "torch" else m, stream)
            hows[k] = "graph"
        except RuntimeError:       # an op a graph cannot hold: timed eagerly
            torch.cuda.synchronize()
            graphs[k] = None
            hows[k] = "eager"
    counts = {"ours": m, "ours again": m, "torch": 1, "copy": m, "ab": m, "fla": m}
    names = list(graphs)
    times = {k: [] for k in names}
    none = torch.empty(0, device="cuda")

    def eager(fn):
        with torch.cuda.stream(stream):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            fn(0)
            e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1)
    for r in range(a.rounds):
        for j in range(len(names)):
            k = names[(r + j) % len(names)]
            if graphs[k] is None:
                times[k].append(eager(fns[k]))
            else:
                times[k].append(time_graph(graphs[k], counts[k], none, stream) / 1e3)   # ms a call
    med = {k: statistics.median(v) for k, v in times.items()}
    if a.profile:
        print_kernel_times("%dx%d/%d" % (S, n, hv), lambda: ours(0), stream)
        if kt_ab:
            print_kernel_times("%dx%d/%d ab" % (S, n, hv), lambda: other(0), stream)
    bar = BARS.get((S, n, hv))
    return {"seqs": S, "tokens": n, "hv": hv, "kernel": ch.kernel.decode(), "path": ch.path.decode(),
            "ms": med["ours"], "ms_min": min(times["ours"]), "ms_max": max(times["ours"]),
            "control": med["ours again"] / med["ours"], "mtok_s": S * n / med["ours"] / 1e3,
            "bar_ms": bar or 0.0, "x_bar": med["ours"] / bar if bar else float("nan"),
            "torch_ms": med["torch"], "torch_timed": hows["torch"], "x_torch": med["torch"] / med["ours"],
            "copy_ms": med["copy"],
            "err_peer": err_peer, "err_truth": err_truth,
            "ab_ms": med.get("ab", float("nan")), "ab_x": med.get("ab", float("nan")) / med["ours"],
            "ab_min": min(times["ab"]) if kt_ab else float("nan"), "ab_max": max(times["ab"]) if kt_ab else float("nan"),
            "ab_kernel": ab_kernel, "err_ab": err_ab,
            "fla_ms": med.get("fla", float("nan")), "fla_x": med.get("fla", float("nan")) / med["ours"],
            "fla_min": min(times["fla"]) if fla else float("nan"), "fla_max": max(times["fla"]) if fla else float("nan"),
            "fla_timed": hows.get("fla", ""), "err_fla": err_fla}, None


class EnvKtrt:
    """ours with the environment variable NAME set to VALUE while it chooses and launches (graphs
    keep the plan they captured): a plan knob against the default, on the same kernels, in the same
    rounds"""

    def __init__(self, kt, name, value):
        self.kt, self.name, self.value = kt, name, str(value)

    def _with(self, f, *args, **kw):
        old = os.environ.get(self.name)
        os.environ[self.name] = self.value
        try:
            return f(*args, **kw)
        finally:
            if old is None:
                del os.environ[self.name]
            else:
                os.environ[self.name] = old

    def choose(self, *args, **kw):
        return self._with(self.kt.choose, *args, **kw)

    def run(self, *args, **kw):
        return self._with(self.kt.run, *args, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="out/lib/libktrt.so")
    ap.add_argument("--db", required=True)
    ap.add_argument("--rows", default=DEFAULT_ROWS)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="each row's kernels' device times (torch.profiler)")
    ap.add_argument("--workspace-mb", type=int, default=1536, help="ktrt_options.workspace_bytes (one stream slot)")
    ap.add_argument("--ab", default="", help="a second database, timed beside --db's in the same rounds")
    ap.add_argument("--ab-parts", type=int, default=0, help="as --ab, ours with KT_GDNP_PARTS=N (1: the state pass "
                    "and out in turn) against the law's parts")
    ap.add_argument("--ab-env", default="", help="as --ab, ours with NAME=VALUE in the environment (a plan's "
                    "measurement knob, e.g. KT_GDNP_WY_PARTS=0) against the default")
    ap.add_argument("--fla", default="", help="a folder holding fla/ (flash-linear-attention's source): "
                    "its chunked gated delta rule timed in the same rounds (peer_fla.py says what it covers)")
    a = ap.parse_args()
    check_header(header_fields)
    kt = Ktrt(a.lib, a.db, a.workspace_mb << 20, 1)
    if a.ab_env and "=" not in a.ab_env:
        sys.exit("bench_gdn_prefill: --ab-env %r: expected NAME=VALUE" % a.ab_env)
    kt_ab = (Ktrt(a.lib, a.ab, a.workspace_mb << 20, 1) if a.ab else EnvKtrt(kt, "KT_GDNP_PARTS", a.ab_parts) if a.ab_parts
             else EnvKtrt(kt, *a.ab_env.split("=", 1)) if a.ab_env else None)
    fla = peer_fla.load(a.fla) if a.fla else None
    stream = torch.cuda.Stream()
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    print("%-12s %-8s %9s %9s %9s %8s %10s %7s %9s %7s %8s %8s  %s" % (
        "row", "path", "ms", "min", "max", "control", "Mtok/s", "/bar", "torch ms", "x torch", "err", "truth", "kernel"))
    out, failed = [], 0
    for spec in a.rows.split(","):
        sn, hv = spec.split("/")
        S, n = (int(x) for x in sn.split("x"))
        r, why = row(kt, kt_ab, fla, a, S, n, int(hv), gen, stream)
        if r is None:
            failed += 1
            print("%-12s %s" % (spec, why), flush=True)
            continue
        out.append(r)
        print("%-12s %-8s %9.4f %9.4f %9.4f %8.3f %10.1f %7s %9.3f %7.1f %8.1e %8.1e  %s" % (
            spec, r["path"], r["ms"], r["ms_min"], r["ms_max"], r["control"], r["mtok_s"],
            "%.2f" % r["x_bar"] if r["bar_ms"] else "-", r["torch_ms"], r["x_torch"], r["err_peer"], r["err_truth"],
            r["kernel"]), flush=True)
        if kt_ab:
            print("    --ab %9.4f ms (%.4f-%.4f), %.3fx ours, err %.1e: %s" % (r["ab_ms"], r["ab_min"], r["ab_max"], r["ab_x"],
                                                                       r["err_ab"], r["ab_kernel"]), flush=True)
        if fla:
            print("    fla  %9.4f ms (%.4f-%.4f, %s), %.3fx ours, err %.1e (no conv, no gated norm)" % (
                r["fla_ms"], r["fla_min"], r["fla_max"], r["fla_timed"], r["fla_x"], r["err_fla"]), flush=True)
    if os.environ.get("OUT") and out:
        with open(os.path.join(os.environ["OUT"], "bench_gdn_prefill.tsv"), "w") as f:
            keys = list(out[0])
            f.write("\t".join(keys) + "\n")
            for r in out:
                f.write("\t".join(str(r[k]) for k in keys) + "\n")
    print("bench_gdn_prefill: %d rows, %d failed" % (len(out) + failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
