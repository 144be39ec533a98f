"""stride_read.py: does vLLM's NHD cache layout ([blocks][slots][kv heads][d]) cost read bandwidth
when a program reads one kv head's keys (d x 2 bytes a key at a stride of kv heads x d x 2), as
every per-kv-head attention block does, against reading all heads' bytes of the same keys
(contiguous)? Triton, one H200; the same 1 GiB read either way, graph-timed, median of 9 runs,
interleaved, the contiguous read as the control in every round. Prints GB/s per layout."""
import statistics
import sys
import torch
import triton
import triton.language as tl


@triton.jit
def read_heads(x, out, keys_per_prog, stride_key, D: tl.constexpr, BK: tl.constexpr):
    # program (h, c): keys [c * keys_per_prog, +keys_per_prog) of head h: D elements a key at stride_key
    h = tl.program_id(0)
    c = tl.program_id(1)
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D)
    base = x + h * D + (c * keys_per_prog).to(tl.int64) * stride_key
    acc = tl.zeros((BK, D), dtype=tl.float32)
    for k0 in range(0, keys_per_prog, BK):
        p = base + (k0 + offs_k)[:, None].to(tl.int64) * stride_key + offs_d[None, :]
        acc += tl.load(p).to(tl.float32)
    s = tl.sum(acc)
    tl.store(out + h * tl.num_programs(1) + c, s)


def time_graph(fn, reps=9, inner=10):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for _ in range(inner):
            fn()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / inner)
    return ts


def main():
    total = 1 << 30
    rows = []
    cases = []
    for d in (128, 256):
        for hkv in (1, 2, 4, 8):
            cases.append((d, hkv))
    x = torch.randn(total // 2, dtype=torch.bfloat16, device="cuda")
    fns = {}
    for d, hkv in cases:
        keys = total // (2 * d * hkv)
        # per-head programs (hkv programs a key range) and, as the control, the whole slot as one "head"
        for mode in ("head", "slot"):
            H = hkv if mode == "head" else 1
            DD = d if mode == "head" else d * hkv
            if DD > 1024:
                continue
            stride = d * hkv
            kpp = 1024 if mode == "head" else max(64, 1024 // hkv)
            progs = keys // kpp
            out = torch.empty(H * progs, dtype=torch.float32, device="cuda")
            for bk, nw, ns in ((32, 4, 3), (64, 4, 3), (16, 4, 4)):
                if bk * DD > 16384:
                    continue
                def fn(H=H, progs=progs, out=out, kpp=kpp, stride=stride, DD=DD, bk=bk, nw=nw, ns=ns):
                    read_heads[(H, progs)](x, out, kpp, stride, D=DD, BK=bk, num_warps=nw, num_stages=ns)
                fns[(d, hkv, mode, bk, nw, ns)] = fn
    # best config per (d, hkv, mode), then interleaved timing of those
    best = {}
    for key, fn in fns.items():
        t = statistics.median(time_graph(fn, reps=3))
        k3 = key[:3]
        if k3 not in best or t < best[k3][0]:
            best[k3] = (t, key)
    order = sorted(best)
    times = {k: [] for k in order}
    for r in range(9):
        for k in order[r % len(order):] + order[:r % len(order)]:
            times[k].append(statistics.median(time_graph(fns[best[k][1]], reps=1)))
    print("layout read, 1 GiB bf16, Triton, best of BK/warps/stages per row; median [min, max] over 9 interleaved rounds")
    print("%4s %4s %5s %10s %10s %10s %8s  %s" % ("d", "hkv", "mode", "us", "min", "max", "GB/s", "config"))
    for k in order:
        ts = times[k]
        med = statistics.median(ts)
        print("%4d %4d %5s %10.1f %10.1f %10.1f %8.0f  bk=%d nw=%d ns=%d" % (k[0], k[1], k[2], med, min(ts), max(ts),
              total / med / 1e3, *best[k][1][3:]))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
