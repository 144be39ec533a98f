/* test_gdn_prefill_emu64.cpp: test_gdn_prefill_emu.cpp with 64-lane waves in CDNA's MFMA layout, as
 * gfx942 runs prefill.hip. */
#define KT_WAVE 64
#define KT_EMU_LAYOUT 2
#include "test_gdn_prefill_emu.cpp"
