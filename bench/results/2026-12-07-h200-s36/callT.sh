#!/bin/sh
# Thirty-sixth session, device call T (~1 minute): the GDN decode state's stores as 16-byte stores
# (kt_stg16: NVVM had split each into four st.global.f32) against the same forms built before
# (out/s42: new1 / old1 K-last bv64 nw4 kpt16 mt1, new0 / old0 [.., K, V] bv128 nw8 kpt16 mt1 ob2),
# hv 32 x batch 32 and 128, one token, cold, in the same rounds; each row's output checked against
# the float64 truth by bench_gdn. Carry out/lib out/device out/s42. $OUT/t1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-t1}
nvidia-smi --query-gpu=name --format=csv,noheader
for d in new1 old1 new0 old0; do xz -dc out/s42/$d.ktdb.xz > $W/$d.ktdb; done
for vk in 1 0; do
    OUT=$R timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/new$vk.ktdb --ab $W/old$vk.ktdb --vk $vk \
        --rounds 5 --hv 32 --batch 32,128 --tokens 1 --regime cold > $R/bench-vk$vk.log 2>&1
    echo "vk $vk rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings|wrong|refused" $R/bench-vk$vk.log | cut -c1-120
done
call_end ${N:-t1}
