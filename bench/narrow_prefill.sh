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
: "${DTYPES:=\"bf16\"}" "${VKS:=0}" "${BTS:=64}" "${BVS:=16}" "${NWS:=8}" "${PFS:=4}"
sed -e "s/{ \"dtype\", { \"bf16\", \"fp16\" } }/{ \"dtype\", { $DTYPES } }/" \
    -e "s/{ \"VK\", { 0, 1 } }/{ \"VK\", { $VKS } }/" \
    -e "s/{ \"BT\", { 16, 32, 64 } }/{ \"BT\", { $BTS } }/" \
    -e "s/{ \"BV\", { 16, 32, 64 } }/{ \"BV\", { $BVS } }/" \
    -e "s/{ \"NW\", { 1, 2, 4, 8 } }/{ \"NW\", { $NWS } }/" \
    -e "s/{ \"PF\", { 0, 1, 2, 3, 4, 5 } }/{ \"PF\", { $PFS } }/" templates/gdn/prefill.lua > "$x"
# a value the recipe's own list lacks would build a form the recipe never offers
within() {   # within NAME "VALUES" "LIST"
    for v in $(echo "$2" | tr ',' ' '); do
        case " $(echo "$3" | tr ',' ' ') " in *" $v "*) ;; *) echo "narrow_prefill: $1 $v is not in the recipe's {$3}" >&2; exit 1 ;; esac
    done
}
within dtype "$DTYPES" '"bf16", "fp16"'
within VK "$VKS" "0, 1"
within BT "$BTS" "16, 32, 64"
within BV "$BVS" "16, 32, 64"
within NW "$NWS" "1, 2, 4, 8"
within PF "$PFS" "0, 1, 2, 3, 4, 5"
# every axis narrowed, or prefill.lua's lists changed under the sed: say which
for want in "dtype\", { $DTYPES }" "VK\", { $VKS }" "BT\", { $BTS }" "BV\", { $BVS }" \
            "NW\", { $NWS }" "PF\", { $PFS }"; do
    grep -qF "{ \"$want }" "$x" || { echo "narrow_prefill: prefill.lua's axis \"$want\" not narrowed (its list changed?)" >&2; exit 1; }
done
rm -f "$db"
out/bin/kt gen --recipe "$x" --target "${TGT:-sm_90a}" --db "$db" -j 2 --quiet
sqlite3 "$db" "select name, status, vgpr, spills from kernel"
