#!/bin/sh
# Nineteenth session, device call 8 (bench/NOTES.md, "q 8's loop in SASS"): the SASS of q 8's pick
# (prefill.hip bf16 d256 BM64 BN64 NW4 WD1 QL1 ST1) and of q 1's (decode.hip KD BN16 NW4 OB4), by
# the device's cuobjdump from the cubins carried in out/carry (written from the build's database).
CO=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1); echo "cuobjdump: $CO"; for f in q8p_st1 kd16; do $CO -sass out/carry/$f.cubin > $OUT/$f.sass 2>&1; echo "$f $(wc -l < $OUT/$f.sass) lines"; done
