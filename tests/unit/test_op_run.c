/* test_op_run.c: the launch plan's enqueue (runtime/op_run.c) on a recording backend: which stream
 * each launch, event record and wait goes to, in order, for a plan on two lanes (the fork after its
 * wait, the cross-lane waits, the join only where no later lane-0 launch waits for lane 1's last),
 * the same plan in list order without a second stream, each launch's own argument fields
 * (bind_launch), a failure after the fork (lane 1 joined before the error returns) and before it
 * (nothing to join), and kt_lanes_open / close releasing what they made. */
#include <stdio.h>
#include <string.h>
#include "kt_test.h"
#include "op_run.h"
#include "ktrt.h"

static char log_[1024];
static int fail_at = -1, launches, created, destroyed;
static char main_stream, side_stream, events[KT_OP_MAX_LAUNCHES + 1];

static const char *name_of(void *p)
{
    static char buf[8][16];
    static int k;
    char *b = buf[k++ % 8];
    if (p == &main_stream) return "main";
    if (p == &side_stream) return "side";
    if ((char *)p >= events && (char *)p < events + KT_OP_MAX_LAUNCHES + 1) {
        snprintf(b, 16, "e%d", (int)((char *)p - events));
        return b;
    }
    return "?";
}
static void say(const char *fmt, const char *a, const char *b)
{
    char one[64];
    snprintf(one, sizeof one, fmt, a, b);
    strncat(log_, one, sizeof log_ - strlen(log_) - 1);
}

static int rec_launch(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3], unsigned shared,
                      void *stream, const void *args, size_t args_size, char *err, size_t errlen)
{
    char what[16];
    snprintf(what, sizeof what, "L%d.p%d", *(const int *)fn, *(const int *)args);
    if (launches++ == fail_at) return snprintf(err, errlen, "injected"), 1;
    say("%s@%s ", what, name_of(stream));
    return 0;
}
static int rec_record(ktb_backend *b, void *event, void *stream, char *err, size_t errlen)
{
    say("R%s@%s ", name_of(event), name_of(stream));
    return 0;
}
static int rec_wait(ktb_backend *b, void *stream, void *event, char *err, size_t errlen)
{
    say("W%s@%s ", name_of(event), name_of(stream));
    return 0;
}
static int rec_lane(ktb_backend *b, void **stream, char *err, size_t errlen)
{
    *stream = &side_stream;
    created++;
    return 0;
}
static int rec_event(ktb_backend *b, void **event, char *err, size_t errlen)
{
    *event = &events[created++ - 1];   /* the lane's stream first */
    return 0;
}
static int rec_destroy(ktb_backend *b, void *x, char *err, size_t errlen)
{
    destroyed++;
    return 0;
}
static const ktb_ops rec_ops = {.vendor = "rec", .launch = rec_launch, .event_record = rec_record, .stream_wait = rec_wait,
                                .lane_create = rec_lane, .event_create = rec_event, .event_destroy = rec_destroy,
                                .stream_destroy = rec_destroy};

/* the argument struct is the launch's part, as bind_launch leaves it */
static void fake_bind_launch(void *args, const kt_op_launch *l) { *(int *)args = l->part; }
static const kt_op fake = {.name = "fake", .args_size = sizeof(int), .bind_launch = fake_bind_launch};

static int run(const kt_op_launch *L, int nl, const kt_lanes *lanes, char *err, size_t errlen)
{
    static int ids[KT_OP_MAX_LAUNCHES];
    void *fn[KT_OP_MAX_LAUNCHES];
    for (int i = 0; i < nl; i++) ids[i] = i, fn[i] = &ids[i];
    int args = -1;
    log_[0] = 0;
    launches = 0;
    return kt_op_enqueue(&(ktb_backend){&rec_ops, 0}, &fake, L, nl, fn, &args, &main_stream, lanes, err, errlen);
}

int main(void)
{
    ktb_backend b = {&rec_ops, 0};
    kt_lanes lanes;
    char err[256];
    KT_CHECK_INT(kt_lanes_open(&b, &lanes, err, sizeof err), KT_OK);
    KT_CHECK(lanes.side == &side_stream && lanes.done[0] == &events[0] && lanes.unwind == &events[KT_OP_MAX_LAUNCHES]);

    /* gdn_prefill's shape: wy; a state pass (lane 1) and an out (lane 0, after it) a part */
    kt_op_launch L[5];
    memset(L, 0, sizeof L);
    for (int i = 0; i < 5; i++) L[i].suffix = "";
    L[1].lane = 1, L[1].after = 1;
    L[2].after = 2, L[2].part = 0, L[2].parts = 2;
    L[3].lane = 1, L[3].part = 1, L[3].parts = 2;
    L[4].after = 4, L[4].part = 1, L[4].parts = 2;
    L[1].parts = 2;
    KT_CHECK_INT(run(L, 5, &lanes, err, sizeof err), KT_OK);
    KT_CHECK_STR(log_, "L0.p0@main Re0@main We0@side L1.p0@side Re1@side We1@main L2.p0@main "
                       "L3.p1@side Re3@side We3@main L4.p1@main ");
    /* no second stream: list order on the caller's, no event */
    KT_CHECK_INT(run(L, 5, NULL, err, sizeof err), KT_OK);
    KT_CHECK_STR(log_, "L0.p0@main L1.p0@main L2.p0@main L3.p1@main L4.p1@main ");
    /* lane 1's last waited for by nobody: the caller's stream joins it */
    KT_CHECK_INT(run(L, 4, &lanes, err, sizeof err), KT_OK);
    KT_CHECK_STR(log_, "L0.p0@main Re0@main We0@side L1.p0@side Re1@side We1@main L2.p0@main L3.p1@side Re3@side We3@main ");
    /* a failure after the fork: what lane 1 holds is joined before the error returns */
    fail_at = 3;
    KT_CHECK_INT(run(L, 5, &lanes, err, sizeof err), KT_EDEVICE);
    KT_CHECK_CONTAINS(err, "launch 3");
    char want[160];   /* the unwind event is the one past the launches' */
    snprintf(want, sizeof want, "L0.p0@main Re0@main We0@side L1.p0@side Re1@side We1@main L2.p0@main Re%d@side We%d@main ",
             KT_OP_MAX_LAUNCHES, KT_OP_MAX_LAUNCHES);
    KT_CHECK_STR(log_, want);
    /* before it: nothing to join */
    fail_at = 0;
    KT_CHECK_INT(run(L, 5, &lanes, err, sizeof err), KT_EDEVICE);
    KT_CHECK_STR(log_, "");
    fail_at = -1;
    /* a plan the rules refuse is never enqueued */
    L[1].after = 0;
    KT_CHECK_INT(run(L, 5, &lanes, err, sizeof err), KT_EINVAL);
    KT_CHECK_CONTAINS(err, "fake: launch 1");
    KT_CHECK_STR(log_, "");

    kt_lanes_close(&b, &lanes);
    KT_CHECK_INT(destroyed, created);   /* one release for each thing made */
    KT_CHECK(lanes.side == NULL && lanes.unwind == NULL);
    kt_lanes_close(&b, &lanes);         /* a closed one is fine */
    KT_CHECK_INT(destroyed, created);
    KT_TEST_END();
}
