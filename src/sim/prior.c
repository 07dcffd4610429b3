/* prior.c — the Venus prior for traces without GPU metrics (sim.h,
 * lucid_share_prior): a sharing score per job drawn from the Venus jobs'
 * scores and co-located speeds per pair of scores, both learned from
 * data/venus-sept (the trace, sharing_labels.csv, colocation_pairs.csv;
 * CC-BY 4.0 / S-Lab licence, see its README).  lucid_share_prior_learn
 * recomputes the table from those files; tests/test_prior.c checks that
 * the constants below are what it gives. */
#include <string.h>

#include "lucid/sim.h"
#include "lucid/manifest.h"
#include "lucid/util.h"

/* Venus September 2020: 23,859 jobs, labels of their workloads (the
 * Packing Analyze Model's, sharing_labels.csv): 14,196 light, 6,296
 * medium, 3,367 heavy.  Speeds: mean over the 2,776 measured co-locations
 * of colocation_pairs.csv whose two workloads are labelled, by (own
 * label, partner's label); a packed job never runs faster than alone, so
 * a mean above 1 (light with light: 1.0086, measurement noise) counts as
 * 1 where the prior is applied (lucid_share_prior_speed). */
const lucid_share_prior lucid_venus_prior = {
    .jobs = {14196, 6296, 3367},
    .speed = {{1.008628630705394, 0.9855952380952383, 0.9588888888888883},
              {0.9927202380952377, 0.9251176470588235, 0.8335541666666668},
              {0.9560222222222222, 0.8861041666666668, 0.7567}},
};

int32_t lucid_share_prior_score(const lucid_share_prior *p, int64_t job_id, uint64_t seed)
{
    int64_t total = p->jobs[0] + p->jobs[1] + p->jobs[2];
    if (total <= 0)
        return 2;
    /* A job's draw depends on its id and the seed only: the same job gets
     * the same score in every run and policy. */
    uint64_t h = lucid_hash_bytes(LUCID_FNV_OFFSET ^ seed, &job_id, sizeof job_id);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    int64_t at = (int64_t)(h % (uint64_t)total);
    return at < p->jobs[0] ? 0 : at < p->jobs[0] + p->jobs[1] ? 1 : 2;
}

double lucid_share_prior_speed(const lucid_share_prior *p, int32_t score, int32_t partner)
{
    if (score < 0 || score > 2 || partner < 0 || partner > 2)
        return 1.0;
    double s = p->speed[score][partner];
    return s < 1.0 ? s : 1.0;
}

int lucid_share_prior_learn(const lucid_trace *trace, const lucid_sharing *sharing,
                            const lucid_pairs *pairs, lucid_share_prior *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < trace->njobs; i++) {
        int64_t row = lucid_sharing_find(sharing, &trace->jobs[i].workload);
        if (row >= 0 && sharing->rows[row].label >= 0 && sharing->rows[row].label <= 2)
            out->jobs[sharing->rows[row].label]++;
    }
    double sum[3][3] = {{0}};
    int64_t n[3][3] = {{0}};
    for (size_t i = 0; i < pairs->count; i++) {
        const lucid_pair_row *r = &pairs->rows[i];
        int64_t ra = lucid_sharing_find(sharing, &r->a), rb = lucid_sharing_find(sharing, &r->b);
        if (ra < 0 || rb < 0)
            continue;
        int32_t la = sharing->rows[ra].label, lb = sharing->rows[rb].label;
        if (la < 0 || la > 2 || lb < 0 || lb > 2)
            continue;
        sum[la][lb] += r->speed_a;
        n[la][lb]++;
        sum[lb][la] += r->speed_b;
        n[lb][la]++;
    }
    int complete = 1;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            out->speed[a][b] = n[a][b] ? sum[a][b] / (double)n[a][b] : 1.0;
            complete &= n[a][b] > 0;
        }
    return complete ? 0 : -1;
}
