#!/usr/bin/env python3
"""trace_gdn.py LIB DB HV BATCH [VK]: one decode step of a KT_GDN_TRACE build (templates/gdn/decode.hip,
built by `kt gen --flags -DKT_GDN_TRACE`), hot, after warm-up launches: each block's SM clock at the
step's phase boundaries (thread 0 and the last thread), printed as the median and max over blocks
of the cycles since the block's entry, and the step's span on the global timer (first block's entry
to last block's end). Phases: 1 metadata back, 11 state loads issued, 12 conv loads issued, 13
gates done, 2 conv inputs back and convolved, 3 first barrier, 4 norms / replay done, 5 first token's row sums across waves, 6
tokens done, 7 split norm's hand-off, 8 state stores issued, 9 split norm's last block done, 10 end."""
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import KT_OK, Ktrt  # noqa: E402
from gdn_common import Layer, Step  # noqa: E402

lib, db, hv, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
vk = int(sys.argv[5]) if len(sys.argv) > 5 else 0   # the state layout (1: K-last)
gen = torch.Generator(device="cuda")
gen.manual_seed(7)
kt = Ktrt(lib, db)
L = Layer("bf16", hv // 2, hv, 128, 128, 4, batch, vk, 0, 1, gen)
st = Step(L, [1] * batch, list(range(batch)), None, gen)
rc, ch, err = kt.choose("bf16", st.args, op="gdn_decode")
if rc != KT_OK:
    sys.exit("refused: " + err)
blocks = batch * hv * 128          # upper bound: BV >= 1 columns a block
trace = torch.zeros(blocks * 32, dtype=torch.int64, device="cuda")
st.args.spec_log = trace.data_ptr()
for _ in range(20):
    kt.run("bf16", st.args, op="gdn_decode")
torch.cuda.synchronize()
PTS = [1, 11, 12, 13, 2, 3, 4, 5, 6, 7, 8, 9, 10]
spans, phases = [], {(i, w): [] for i in PTS for w in (0, 16)}
for rep in range(10):
    trace.zero_()
    kt.run("bf16", st.args, op="gdn_decode")
    torch.cuda.synchronize()
    t = trace.view(-1, 32).cpu()
    t = t[t[:, 15] != 0]
    spans.append((t[:, 14].max() - t[:, 15].min()).item())
    for i in PTS:
        for w in (0, 16):
            d = t[:, w + i] - t[:, 0]
            d = d[t[:, w + i] != 0]
            if len(d):
                phases[(i, w)].append((d.median().item(), d.max().item()))
print("%s hv %d batch %d: %d blocks, span (global timer) median %.2f us, min %.2f" % (
    ch.kernel.decode(), hv, batch, len(t), statistics.median(spans) / 1e3, min(spans) / 1e3))
names = {11: "state ld issued", 12: "conv ld issued", 13: "gates", 1: "metadata", 2: "conv in", 3: "barrier 1", 4: "norms", 5: "rowsum x-wave", 6: "tokens done",
         7: "hand-off", 8: "state stored", 9: "norm done", 10: "end"}
print("  cycles since the block's entry (thread 0's clock): median and max over blocks, thread 0 | last thread")
for i in PTS:
    c = ["%6.0f %6.0f" % (statistics.median(p[0] for p in phases[(i, w)]), statistics.median(p[1] for p in phases[(i, w)]))
         if phases[(i, w)] else "%13s" % "-" for w in (0, 16)]
    print("  %2d %-16s %s | %s" % (i, names[i], c[0], c[1]))
