#!/bin/sh
# export_gemm.sh DB TARGET DIR: write every ok GEMM kernel (every template) of TARGET in DB as
# DIR/<name>.cubin plus DIR/manifest.txt for gemm_check (with the ST column, 0 for static shared
# memory), straight from the database the generator wrote (the code that runs on the device is
# byte for byte the code the DB holds).
set -eu
DB=$1; T=$2; DIR=$3
mkdir -p "$DIR"
sqlite3 "$DB" "SELECT writefile('$DIR/' || name || '.cubin', code) FROM kernel
               WHERE target='$T' AND status='ok' AND ops='gemm'" > /dev/null
sqlite3 -separator ' ' "$DB" "SELECT name || '.cubin', name, json_extract(params,'\$.dtype'),
        json_extract(params,'\$.BM'), json_extract(params,'\$.BN'), json_extract(params,'\$.BK'),
        json_extract(params,'\$.WM'), json_extract(params,'\$.WN'), json_extract(params,'\$.SK'),
        coalesce(json_extract(params,'\$.ST'), 0)
        FROM kernel WHERE target='$T' AND status='ok' AND ops='gemm' ORDER BY name" > "$DIR/manifest.txt"
echo "$(wc -l < "$DIR/manifest.txt") $T kernels exported to $DIR"
