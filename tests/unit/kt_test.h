/* kt_test.h: the smallest test harness that fails loudly. One binary per test file;
 * KT_CHECK records a failure and goes on, main returns the failure count. */
#ifndef KT_TEST_H
#define KT_TEST_H
#include <stdio.h>
#include <string.h>

static int kt_test_failures;
static int kt_test_checks;

#define KT_CHECK(cond) do { kt_test_checks++; if (!(cond)) { kt_test_failures++; \
    fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define KT_CHECK_INT(a, b) do { long long kt_a_ = (long long)(a), kt_b_ = (long long)(b); kt_test_checks++; \
    if (kt_a_ != kt_b_) { kt_test_failures++; fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
    __FILE__, __LINE__, #a, kt_a_, #b, kt_b_); } } while (0)
#define KT_CHECK_CONTAINS(hay, needle) do { const char *kt_h_ = (hay); kt_test_checks++; \
    if (!kt_h_ || !strstr(kt_h_, (needle))) { kt_test_failures++; fprintf(stderr, \
    "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, kt_h_ ? kt_h_ : "(null)", (needle)); } } while (0)
#define KT_CHECK_STR(a, b) do { const char *kt_s_ = (a), *kt_t_ = (b); kt_test_checks++; \
    if (strcmp(kt_s_, kt_t_)) { kt_test_failures++; fprintf(stderr, "%s:%d: \"%s\", expected \"%s\"\n", \
    __FILE__, __LINE__, kt_s_, kt_t_); } } while (0)
#define KT_TEST_END() do { printf("%s: %d checks, %d failed\n", __FILE__, kt_test_checks, kt_test_failures); \
    return kt_test_failures ? 1 : 0; } while (0)

#endif
