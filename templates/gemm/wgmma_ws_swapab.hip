/* wgmma_ws_swapab.hip: wgmma_ws.hip with the operands swapped (C^T = W . A^T), the decode GEMM
 * warp-specialized: one warpgroup copies, one or two compute 64 weight rows each, tokens the
 * instruction's N; see wgmma_ws.hip for the axes and the algorithm. */
#define KT_WGMMA_SWAP 1
#include "gemm/wgmma_ws.hip"
