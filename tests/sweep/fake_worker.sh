#!/bin/sh
# fake_worker.sh: a scripted `kt worker` (protocol: tuner/worker.h) so that CI, which has no GPU,
# drives the whole sweep: supervision, resume, ties, selections. Times are a deterministic
# function of the kernel's name and M (so two sweeps must select the same kernels).
#   FAKE_KEY      device key to announce (must match KT_SWEEP_FAKE_DEVICE)
#   FAKE_CRASH    exit 3 while verifying a kernel whose name contains this, at M = FAKE_AT_M (1)
#   FAKE_CRASH_LINE  space-separated name substrings: at M = FAKE_AT_M, report such a kernel as a
#                 real worker does a poisoned context (`verified <hash> crash nan <detail>`), exit 3
#   FAKE_HANG     stop answering while verifying such a kernel
#   FAKE_WRONG    report such a kernel wrong
#   FAKE_SLEEP    seconds to sleep before each 'done' (to be killed mid-sweep)
#   FAKE_LOG      file to append "gpu <n> problem <m> <n> <k>" lines to
#   FAKE_TIE      name substring: such kernels all time 5.00 us (a tie) on a problem's own key, and
#                 apart (5.00 + a hash's share) on its second instance (a key ending in " @<name>")
gpu=0
while [ $# -gt 0 ]; do
    [ "$1" = --device ] && gpu=$2
    shift
done
echo "ready ${FAKE_KEY:-gfx1201/64/0x7550} 8388608 64 600.0 fake GPU $gpu"
vars=""
m=1
while IFS= read -r line; do
    case $line in
    problem*)
        # problem <cold> <seed> <rounds> <key...>: the GEMM key's dimensions for the log and the times
        set -- $line
        m=1 n=0 k=0; vars=""; second=0
        for w in "$@"; do
            case $w in m\<=*) m=${w#m<=} ;; n=*) n=${w#n=} ;; k=*) k=${w#k=} ;; rows\<=*) m=${w#rows<=} ;; @*) second=1 ;; esac
        done
        [ -n "${FAKE_LOG:-}" ] && echo "gpu $gpu problem $m $n $k" >> "$FAKE_LOG"
        ;;
    variant*) vars="$vars$line
" ;;
    control*) ctl=${line#control } ;;
    run)
        ok=""
        while IFS= read -r v; do
            [ -z "$v" ] && continue
            set -- $v
            hash=$2 verify=$3 name=$4
            if [ "$verify" = 1 ]; then
                echo "begin $hash"
                at=${FAKE_AT_M:-1}
                case $name in *"${FAKE_CRASH:-@none@}"*) [ "$m" = "$at" ] && exit 3 ;; esac
                for pat in ${FAKE_CRASH_LINE:-}; do
                    case $name in *"$pat"*) [ "$m" = "$at" ] && { echo "verified $hash crash nan illegal address (fake)"; exit 3; } ;; esac
                done
                case $name in *"${FAKE_HANG:-@none@}"*) [ "$m" = "$at" ] && { sleep 30; exit 0; } ;; esac
                case $name in *"${FAKE_WRONG:-@none@}"*) [ "$m" = "$at" ] && { echo "verified $hash wrong 2.5e-01 error over the bf16 bound"; continue; } ;; esac
                echo "verified $hash ok 1.0e-03 -"
            fi
            ok="$ok$hash $name
"
        done <<EOF2
$vars
EOF2
        first=""
        while IFS= read -r v; do
            [ -z "$v" ] && continue
            set -- $v
            c=$(printf '%s' "$2" | cksum | cut -d' ' -f1)
            t=$(( 1000 + c % 9000 + m * 7 ))
            case $2 in *"${FAKE_TIE:-@none@}"*) t=$(( 500 + second * (1 + c % 50) )) ;; esac
            printf 'timed %s %d.%02d %d.00 %d.00 7 4\n' "$1" $((t / 100)) $((t % 100)) $((t / 100)) $((t / 100 + 1))
            [ -z "$first" ] && first=$1
        done <<EOF2
$ok
EOF2
        [ -n "$first" ] && echo "control $first 10.00 10.01"
        [ -n "${FAKE_SLEEP:-}" ] && sleep "$FAKE_SLEEP"
        echo done
        ;;
    esac
done
