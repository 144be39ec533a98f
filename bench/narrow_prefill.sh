#!/bin/sh
# narrow_prefill.sh DB: templates/gdn/prefill.lua's forms narrowed to one family of the device calls'
# A/B databases, built into DB (created anew) for TGT (default sm_90a). The axes' values by
# environment, each a Lua list's inside: DTYPES ("bf16"), VKS (0), BTS (64), BVS (16), NWS (8),
# PFS (4). The narrowed recipe lives beside the template only while kt gen runs.
set -eu
cd "$(dirname "$0")/.."
db=$1
x=templates/gdn/_narrow.lua
trap 'rm -f "$x"' EXIT INT TERM
sed -e "s/{ \"dtype\", { \"bf16\", \"fp16\" } }/{ \"dtype\", { ${DTYPES:-\"bf16\"} } }/" \
    -e "s/{ \"VK\", { 0, 1 } }/{ \"VK\", { ${VKS:-0} } }/" \
    -e "s/{ \"BT\", { 16, 32, 64 } }/{ \"BT\", { ${BTS:-64} } }/" \
    -e "s/{ \"BV\", { 16, 32, 64 } }/{ \"BV\", { ${BVS:-16} } }/" \
    -e "s/{ \"NW\", { 1, 2, 4, 8 } }/{ \"NW\", { ${NWS:-8} } }/" \
    -e "s/{ \"PF\", { 0, 1, 2, 3, 4, 5 } }/{ \"PF\", { ${PFS:-4} } }/" templates/gdn/prefill.lua > "$x"
for axis in dtype VK BT BV NW PF; do
    grep -q "{ \"$axis\", {" "$x" || { echo "narrow_prefill: axis $axis not found in prefill.lua" >&2; exit 1; }
done
cmp -s "$x" templates/gdn/prefill.lua && { echo "narrow_prefill: prefill.lua's axes changed: the sed matched none" >&2; exit 1; }
rm -f "$db"
out/bin/kt gen --recipe "$x" --target "${TGT:-sm_90a}" --db "$db" -j 2 --quiet
sqlite3 "$db" "select name, status, vgpr, spills from kernel"
