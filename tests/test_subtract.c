/* test_subtract.c — the fast repeated subtraction equals the naive
 * one-per-second loop bit for bit (random remainders and the measured
 * co-location speeds, including values with exact rounding ties). */
#include <string.h>

#include "lucid/sched.h"
#include "testutil.h"

static void check(double start, double rate, int64_t budget, int until_done)
{
    double naive = start, fast = start;
    int64_t n = 0;
    while (n < budget && !(until_done && naive <= 0)) {
        naive -= rate;
        n++;
    }
    int64_t k = lucid_subtract_repeatedly(&fast, rate, budget, until_done);
    if (k != n || memcmp(&naive, &fast, sizeof naive) != 0)
        fail_msg("start %.17g rate %.17g budget %lld: naive %lld -> %.17g, fast %lld -> %.17g",
                 start, rate, (long long)budget, (long long)n, naive, (long long)k, fast);
}

static void matches_naive_loop(void **state)
{
    (void)state;
    static const double rates[] = {0.983, 1.055, 0.97, 1.034, 0.5, 0.75, 1.498, 0.1,
                                   0.3333333333333333, 1.0000000000000002, 0.9999999999999999};
    lucid_rng rng;
    lucid_rng_seed(&rng, 5);
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++)
        for (int trial = 0; trial < 60; trial++) {
            double start = (double)lucid_rng_below(&rng, 200000) + lucid_rng_unit(&rng) * (trial % 3);
            check(start, rates[r], INT64_MAX, 1);
            check(start, rates[r], (int64_t)lucid_rng_below(&rng, 300000), 0);
        }
    /* A rate whose low bits are exactly half an ulp in [1, 2): rounding ties. */
    check(1.75, 0x1p-53 * 3 + 0.25, 100, 0);
    check(300.0, 1.0 + 0x1p-45, INT64_MAX, 1);
    check(0.0, 0.9, 10, 1);
    check(-5.0, 0.9, 10, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(matches_naive_loop)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
