/* kt_env.h: every environment variable ktune reads, in one table, read through one function.
 * Prefix kt_env_. Part of libktrt (every runtime .c) and of libkt.
 *
 * The table (runtime/kt_env.c) lists each knob with its default and a one-line meaning; README.md's
 * Environment table lists the same names (tests/unit/test_env.c holds the two equal, and holds
 * every C source outside kt_env.c to kt_env_get). Shell scripts and tune.lua read their knobs
 * themselves, but those knobs are in the table too. */
#ifndef KT_ENV_H
#define KT_ENV_H

typedef struct kt_env_knob {
    const char *name;      /* "KT_CACHE" */
    const char *dflt;      /* what applies when it is unset, in words: "out/cache", "unset" */
    const char *meaning;   /* one line */
} kt_env_knob;

/* getenv(name) for a name in the table. A name not in the table is a programming error: it says
 * so on stderr (once per call) and returns NULL whatever the environment holds. */
const char *kt_env_get(const char *name);

/* The table, n entries; for the tests and for documentation. */
const kt_env_knob *kt_env_knobs(int *n);

#endif
