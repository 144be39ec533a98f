/* op_run.c: the launch plan's enqueue (op_run.h). */
#include "op_run.h"
#include <stdio.h>
#include <string.h>
#include "ktrt.h"

int kt_lanes_open(ktb_backend *b, kt_lanes *l, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    if (ktb_lane_create(b, &l->side, err, errlen)) return KT_EDEVICE;
    for (int i = 0; i <= KT_OP_MAX_LAUNCHES; i++)
        if (ktb_event_create(b, i < KT_OP_MAX_LAUNCHES ? &l->done[i] : &l->unwind, err, errlen)) {
            kt_lanes_close(b, l);
            return KT_EDEVICE;
        }
    return KT_OK;
}

void kt_lanes_close(ktb_backend *b, kt_lanes *l)
{
    if (!l) return;
    char ignored[128];
    for (int i = 0; i < KT_OP_MAX_LAUNCHES; i++)
        if (l->done[i]) ktb_event_destroy(b, l->done[i], ignored, sizeof ignored);
    if (l->unwind) ktb_event_destroy(b, l->unwind, ignored, sizeof ignored);
    if (l->side) ktb_stream_destroy(b, l->side, ignored, sizeof ignored);
    memset(l, 0, sizeof *l);
}

int kt_op_plan_check(const kt_op_launch *L, int nl, char *err, size_t errlen)
{
    if (nl < 0 || nl > KT_OP_MAX_LAUNCHES) {
        snprintf(err, errlen, "a plan of %d launches (at most %d)", nl, KT_OP_MAX_LAUNCHES);
        return KT_EINVAL;
    }
    int forked = 0;
    for (int i = 0; i < nl; i++) {
        const kt_op_launch *l = &L[i];
        const char *why = NULL;
        if (l->lane != 0 && l->lane != 1) why = "lane is neither 0 nor 1";
        else if (l->after < 0 || l->after > i) why = "waits for a launch not before it";
        else if (l->after && L[l->after - 1].lane == l->lane) why = "waits for a launch of its own lane";
        else if (l->lane == 1 && !forked && !l->after) why = "is lane 1's first and waits for nothing";
        else if (l->parts < 0 || l->part < 0 || (l->parts ? l->part >= l->parts : l->part != 0))
            why = "has a part out of its parts";
        if (why) {
            snprintf(err, errlen, "launch %d (%s) %s", i, l->suffix ? l->suffix : "", why);
            return KT_EINVAL;
        }
        forked |= l->lane == 1;
    }
    return KT_OK;
}

/* after a failure past the fork: the caller's stream waits for what lane 1 holds (best effort: the
 * error in hand is the one reported) */
static void unwind(ktb_backend *b, void *stream, const kt_lanes *lanes)
{
    char ignored[128];
    if (!ktb_event_record(b, lanes->unwind, lanes->side, ignored, sizeof ignored))
        ktb_stream_wait(b, stream, lanes->unwind, ignored, sizeof ignored);
}

int kt_op_enqueue(ktb_backend *b, const kt_op *op, const kt_op_launch *L, int nl, void *const *fn, const void *args,
                  void *stream, const kt_lanes *lanes, char *err, size_t errlen)
{
    char why[384];
    if (kt_op_plan_check(L, nl, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", op->name, why);
        return KT_EINVAL;
    }
    unsigned char own[512];
    if (op->args_size > sizeof own) {
        snprintf(err, errlen, "%s: argument struct of %zu bytes", op->name, op->args_size);
        return KT_EINVAL;
    }
    void *side = lanes ? lanes->side : NULL;
    /* which launches another waits for; lane 1's last, which the caller's stream joins unless a
     * later launch of lane 0 waits for it already */
    int waited[KT_OP_MAX_LAUNCHES] = {0}, last1 = -1;
    for (int i = 0; i < nl; i++) {
        if (L[i].after) waited[L[i].after - 1] = 1;
        if (L[i].lane == 1) last1 = i;
    }
    int join = side && last1 >= 0;
    for (int i = last1 + 1; join && i < nl; i++)
        if (L[i].after == last1 + 1) join = 0;
    if (join) waited[last1] = 1;
    int forked = 0, rc = KT_OK;
    for (int i = 0; i < nl && rc == KT_OK; i++) {
        void *s = side && L[i].lane == 1 ? side : stream;
        if (side && L[i].after && ktb_stream_wait(b, s, lanes->done[L[i].after - 1], why, sizeof why)) {
            snprintf(err, errlen, "%s: launch %d%s waiting for launch %d: %s", op->name, i, L[i].suffix, L[i].after - 1,
                     why);
            rc = KT_EDEVICE;
            break;
        }
        forked |= s == side && side;
        if (fn[i]) {
            const void *a = args;   /* a launch's own copy only where the op fits one to it */
            if (op->bind_launch) {
                memcpy(own, args, op->args_size);
                op->bind_launch(own, &L[i]);
                a = own;
            }
            if ((L[i].early ? ktb_launch_early : ktb_launch)(b, fn[i], L[i].dims.grid, L[i].dims.block,
                                                             L[i].dims.shared, s, a, op->args_size, why, sizeof why)) {
                snprintf(err, errlen, "%s: launch %d%s: %s", op->name, i, L[i].suffix, why);
                rc = KT_EDEVICE;
                break;
            }
        }
        if (side && waited[i] && ktb_event_record(b, lanes->done[i], s, why, sizeof why)) {
            snprintf(err, errlen, "%s: launch %d%s's event: %s", op->name, i, L[i].suffix, why);
            rc = KT_EDEVICE;
        }
    }
    if (rc != KT_OK) {
        if (forked) unwind(b, stream, lanes);
        return rc;
    }
    if (join && ktb_stream_wait(b, stream, lanes->done[last1], why, sizeof why)) {
        snprintf(err, errlen, "%s: joining lane 1: %s", op->name, why);
        unwind(b, stream, lanes);
        return KT_EDEVICE;
    }
    return KT_OK;
}
