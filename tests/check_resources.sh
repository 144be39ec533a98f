#!/bin/sh
# check_resources.sh DB TARGET N: for N random ok kernels of TARGET in DB, the resources stored by
# kt gen must equal what an independent tool reports: llvm-readelf-19 --notes for AMD code
# objects (the metadata note, as LLVM decodes it), nvcc -Xptxas -v for NVIDIA (ptxas's own report,
# from recompiling the kernel's cached instantiation source with the same flags).
set -u
DB=$1; T=$2; N=$3
CACHE=${KT_CACHE:-out/cache}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sqlite3 -separator ' ' "$DB" "SELECT name, cache_key, vgpr, sgpr, agpr, lds_bytes, scratch_bytes, spills FROM kernel
    WHERE target='$T' AND status='ok' ORDER BY random() LIMIT $N" > "$tmp/sample"
count=$(wc -l < "$tmp/sample")
[ "$count" -ge "$N" ] || { echo "only $count ok kernels on $T"; exit 1; }
bad=0
while read -r name key vgpr sgpr agpr lds scratch spills; do
    case $T in
    sm_*)
        src="$CACHE/src/$key.hip"
        [ -f "$src" ] || { echo "$name: cached source $src missing"; bad=1; continue; }
        nvcc -cubin -gencode arch=compute_${T#sm_},code=$T -x cu -O3 -std=c++17 -Itemplates -Xptxas -v \
            "$src" -o "$tmp/k.cubin" > "$tmp/ptxas" 2>&1 || { cat "$tmp/ptxas"; bad=1; continue; }
        got=$(awk -v k="$name" '
            /Compiling entry function/ { cur = ($0 ~ "'"'"'" k "'"'"'") }
            cur && /stack frame/ { match($0, /[0-9]+ bytes stack frame/); f = substr($0, RSTART, RLENGTH) + 0
                                   match($0, /[0-9]+ bytes spill stores/); s = substr($0, RSTART, RLENGTH) + 0
                                   match($0, /[0-9]+ bytes spill loads/); l = substr($0, RSTART, RLENGTH) + 0 }
            cur && /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); r = substr($0, RSTART + 5, RLENGTH - 15) + 0
                                   sm = 0; if (match($0, /[0-9]+ bytes smem/)) sm = substr($0, RSTART, RLENGTH) + 0
                                   print r, sm, f, (s + l > 0); cur = 0 }' "$tmp/ptxas")
        want="$vgpr $lds $scratch $([ "$spills" -gt 0 ] && echo 1 || echo 0)"
        ;;
    *)
        sqlite3 "$DB" "SELECT writefile('$tmp/k.co', code) FROM kernel WHERE name='$name' AND target='$T'" > /dev/null
        llvm-readelf-19 --notes "$tmp/k.co" > "$tmp/notes" 2>&1 || { cat "$tmp/notes"; bad=1; continue; }
        got=$(awk -v k="$name" '
            function flush() { if (n == k) print v, s, (a == "" ? 0 : a), g, p, vs + ss }
            /^  - / { flush(); n = ""; v = s = a = g = p = ""; vs = ss = 0; sub(/^  - /, "    ") }
            /^amdhsa\.target/ { flush(); n = "" }
            $1 == ".name:" { n = $2 }  $1 == ".vgpr_count:" { v = $2 }  $1 == ".sgpr_count:" { s = $2 }
            $1 == ".agpr_count:" { a = $2 }  $1 == ".group_segment_fixed_size:" { g = $2 }
            $1 == ".private_segment_fixed_size:" { p = $2 }  $1 == ".vgpr_spill_count:" { vs = $2 }
            $1 == ".sgpr_spill_count:" { ss = $2 }' "$tmp/notes")
        want="$vgpr $sgpr $agpr $lds $scratch $spills"
        ;;
    esac
    if [ "$got" = "$want" ]; then echo "ok   $name: $want"
    else echo "DIFF $name: db [$want] tool [$got]"; bad=1; fi
done < "$tmp/sample"
exit $bad
