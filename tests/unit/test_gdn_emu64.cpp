/* test_gdn_emu64.cpp: test_gdn_emu.cpp with 64-lane waves, as gfx942 runs decode.hip: its row sums
 * cross lanes 32 apart and four 16-lane groups share a wave, which wave 32 never exercises. */
#define KT_WAVE 64
#define KT_EMU_ASYNC_COPY 0   /* the persistent forms' path without the copy, as AMD builds them */
#include "test_gdn_emu.cpp"
