/* wgmma_swapab.hip: wgmma.hip with the operands swapped (C^T = W . A^T), the decode GEMM on
 * Hopper's warpgroup instruction; see wgmma.hip for the axes and the algorithm. */
#define KT_WGMMA_SWAP 1
#include "gemm/wgmma.hip"
