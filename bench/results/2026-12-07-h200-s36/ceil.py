"""ceil.py (thirty-sixth session, call S): the bandwidth of simple streams the size of the GDN
decode step's state at batch 128 x hv 32 (268 MB fp32 read and written), against bench_common's
copy ceiling (1 GiB copies, best of 10): a copy into another buffer, an in-place scale (read and
write the same addresses, as the step does), each as a CUDA graph of 20 launches, median and best
of 7 replays, GB/s of read + write bytes."""
import statistics
import sys
import os
import torch
sys.path.insert(0, "tests/device")
from bench_common import copy_ceiling_gbs  # noqa: E402

def graph_gbs(fn, nbytes, launches=20, reps=7):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn(); fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for _ in range(launches):
            fn()
    t = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(s):
            e0.record(); g.replay(); e1.record()
        e1.synchronize()
        t.append(e0.elapsed_time(e1) * 1e-3 / launches)
    return nbytes / statistics.median(t) / 1e9, nbytes / min(t) / 1e9

print(torch.cuda.get_device_name())
print("copy ceiling (bench_common, 1 GiB, best of 10): %.0f GB/s" % copy_ceiling_gbs())
n = 128 * 32 * 128 * 128          # floats: batch 128 x hv 32 heads of 128 x 128
x = torch.rand(n, device="cuda")
y = torch.empty_like(x)
for name, fn in [("copy 268 MB -> another", lambda: y.copy_(x)),
                 ("in place x *= 1 (268 MB)", lambda: x.mul_(1.0)),
                 ("in place x = x * a + b (addcmul)", lambda: x.mul_(0.999).add_(1e-3))]:
    nb = 2 * n * 4 * (2 if "addcmul" in name else 1)
    med, best = graph_gbs(fn, nb)
    print("%-36s median %6.0f GB/s  best %6.0f GB/s" % (name, med, best))
