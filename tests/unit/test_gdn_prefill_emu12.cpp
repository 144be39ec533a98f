/* test_gdn_prefill_emu12.cpp: test_gdn_prefill_emu.cpp in RDNA's fragment layout (gfx12's WMMA: a
 * row's accumulators over 16 lanes, rows 0-7 and 8-15 in the two half-waves), as gfx1201 runs
 * prefill.hip. */
#define KT_EMU_LAYOUT 0
#include "test_gdn_prefill_emu.cpp"
