/* launch_dims.h: the grid, block and dynamic shared memory of one kernel launch, shared by every
 * family's geometry (runtime/op.h) and the backends' callers. */
#ifndef KT_LAUNCH_DIMS_H
#define KT_LAUNCH_DIMS_H

typedef struct kt_launch_dims {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared;     /* dynamic shared memory bytes the launch provides */
} kt_launch_dims;

#endif
