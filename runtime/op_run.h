/* op_run.h: a variant's launches enqueued on a caller's stream, and those an op puts on lane 1
 * (kt_op_launch.lane) on a second stream beside it, with the waits the launches name. The one
 * launch path of libktrt and of the tuner's worker, so that the sweep times what serving runs.
 * Prefix kt_lanes_ (the second stream and its events), kt_op_ (the plan and its enqueue). */
#ifndef KT_OP_RUN_H
#define KT_OP_RUN_H
#include <stddef.h>
#include "op.h"
#include "backend.h"

/* Lane 1's stream and one event a launch index (recorded after a launch another one waits for).
 * One owner: whoever owns the caller's stream it serves (a workspace slot, the worker); work of
 * two callers' streams never shares one. */
typedef struct kt_lanes {
    void *side;                         /* NULL: every launch on the caller's stream, in order */
    void *done[KT_OP_MAX_LAUNCHES];
    void *unwind;                       /* joins lane 1 when a plan fails after forking */
} kt_lanes;

/* Creates the stream and the events (*l zeroed first); on failure releases what it made. */
int kt_lanes_open(ktb_backend *b, kt_lanes *l, char *err, size_t errlen);
void kt_lanes_close(ktb_backend *b, kt_lanes *l);   /* a zeroed or closed one is fine */

/* KT_OK, or KT_EINVAL naming the launch at fault: a lane other than 0 / 1, a wait for a launch
 * not before it or on its own lane, lane 1's first launch without a wait, parts out of range. */
int kt_op_plan_check(const kt_op_launch *L, int nl, char *err, size_t errlen);

/* Enqueues launches 0 .. nl-1 of op (fn[i] NULL: launch i's function is absent, skipped; its
 * waits still hold) with the bound argument struct args (op->args_size bytes; each launch gets a
 * copy that op->bind_launch fits to it). lanes NULL or without a second stream: in list order on
 * stream. Otherwise lane 1 on lanes->side, forked from stream where its first launch waits, and
 * stream waits for lane 1's last launch before returning, so that what follows on the caller's
 * stream (the next layer, a graph's end) sees every launch done; so does a plan that fails after
 * forking (what it enqueued on lane 1 is joined before the error returns: a capture can still end,
 * the next call's launches wait for it). KT_OK, or KT_EDEVICE / KT_EINVAL with err naming the
 * launch. */
int kt_op_enqueue(ktb_backend *b, const kt_op *op, const kt_op_launch *L, int nl, void *const *fn, const void *args,
                  void *stream, const kt_lanes *lanes, char *err, size_t errlen);

#endif
