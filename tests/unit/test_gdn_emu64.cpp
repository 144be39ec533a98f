/* test_gdn_emu64.cpp: test_gdn_emu.cpp with 64-lane waves, as gfx942 runs decode.hip: its row sums
 * cross lanes 32 apart and four 16-lane groups share a wave, which wave 32 never exercises. */
#define KT_WAVE 64
#define KT_EMU_ASYNC_COPY 0   /* the persistent loop without the copy (an item whose state was not copied ahead loads it) */
#include "test_gdn_emu.cpp"
