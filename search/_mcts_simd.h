/* _mcts_simd.h: the search core's two hot loops in C (used by search/_mcts_puct.pxi and
 * search/_mcts_backup.pxi), and the child_index sentinels that Cython and C share.
 */
#ifndef AZERO_MCTS_SIMD_H
#define AZERO_MCTS_SIMD_H

/* child_index sentinels: the one definition (the Cython enum in _mcts_defs.pxi takes them from here). */
#define AZERO_UNEXPANDED (-1)   /* a legal action whose child has no node yet */
#define AZERO_ILLEGAL (-2)      /* an illegal action (and every slot of a terminal node) */

/* Two hot loops in C, where their shape is easier to state than in Cython. Both do exactly the
 * arithmetic of the Python twin (same IEEE double operations in the same order; SSE2 lanes round
 * exactly like scalar SSE2 code), so results are bit-identical; only the schedule differs.
 *
 * azero_puct_argmax: the PUCT child loop without virtual loss (K = 1: nothing is ever pending).
 *   score(a) = Q(a) + u(a) / (1 + N(a)),  u(a) = c(s) sqrt(N(s)) P(a),  Q(a) = W(a) / N(a) or fpu
 *   if N(a) = 0 (then u / 1 == u exactly). Children go two at a time in SSE2 lanes: a visited child
 *   costs two divisions, the bulk of PUCT's time at well-visited nodes such as the root, and one
 *   divpd does two of them for the price of one divsd. A pair with no visits (most pairs at most
 *   nodes) skips the divisions. Each lane keeps its own running argmax (strict >, so the lowest
 *   index of the lane wins ties) without branches; illegal children score -inf and never win;
 *   the lanes are merged at the end (equal scores: lower index), so ties go to the lowest action
 *   index overall, as everywhere. The scalar loop is the fallback off x86-64 and the odd tail.
 *
 * azero_store_priors: one expanded node's child row from the evaluator's priors: index UNEXPANDED
 *   or ILLEGAL, prior = float32(p / total) over the legal actions (uniform 1 / count if total is
 *   0), 0 elsewhere. The division is again done two lanes at a time.
 */
#include <math.h>
#include <stdint.h>
#include <Python.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline double azero_puct_score(int32_t n, double w, double u, double fpu)
{
    return n > 0 ? w / n + u / (1 + n) : fpu + u;
}

static int32_t azero_puct_argmax(Py_ssize_t A, const int32_t *index, const int32_t *visits,
                                 const double *value_sum, const float *prior,
                                 double c_sqrt, double fpu)
{
    double best = -INFINITY, score;
    int32_t best_a = -1;
    Py_ssize_t a = 0;
#if defined(__SSE2__)
    if (A >= 2) {
        const __m128d vc = _mm_set1_pd(c_sqrt), vfpu = _mm_set1_pd(fpu), one = _mm_set1_pd(1.0);
        const __m128d two = _mm_set1_pd(2.0), ninf = _mm_set1_pd(-INFINITY);
        const __m128i illegal_code = _mm_set1_epi32(AZERO_ILLEGAL);
        __m128d vbest = ninf, vbest_a = _mm_set1_pd(-1.0), va = _mm_set_pd(1.0, 0.0);
        for (; a + 1 < A; a += 2, va = _mm_add_pd(va, two)) {
            __m128d u = _mm_mul_pd(vc, _mm_cvtps_pd(_mm_castsi128_ps(
                            _mm_loadl_epi64((const __m128i *)(prior + a)))));
            __m128d s;
            if ((visits[a] | visits[a + 1]) == 0) {
                s = _mm_add_pd(vfpu, u);                              /* both unvisited */
            } else {
                __m128d n = _mm_cvtepi32_pd(_mm_loadl_epi64((const __m128i *)(visits + a)));
                __m128d visited = _mm_cmpgt_pd(n, _mm_setzero_pd());
                __m128d q = _mm_div_pd(_mm_loadu_pd(value_sum + a), _mm_max_pd(n, one));
                q = _mm_or_pd(_mm_and_pd(visited, q), _mm_andnot_pd(visited, vfpu));
                s = _mm_add_pd(q, _mm_div_pd(u, _mm_add_pd(one, n)));
            }
            __m128i ill32 = _mm_cmpeq_epi32(_mm_loadl_epi64((const __m128i *)(index + a)), illegal_code);
            __m128d ill = _mm_castsi128_pd(_mm_unpacklo_epi32(ill32, ill32));  /* widen to 64-bit lanes */
            s = _mm_or_pd(_mm_andnot_pd(ill, s), _mm_and_pd(ill, ninf));
            __m128d gt = _mm_cmpgt_pd(s, vbest);
            vbest = _mm_or_pd(_mm_and_pd(gt, s), _mm_andnot_pd(gt, vbest));
            vbest_a = _mm_or_pd(_mm_and_pd(gt, va), _mm_andnot_pd(gt, vbest_a));
        }
        double b0 = _mm_cvtsd_f64(vbest), b1 = _mm_cvtsd_f64(_mm_unpackhi_pd(vbest, vbest));
        int32_t a0 = (int32_t)_mm_cvtsd_f64(vbest_a);
        int32_t a1 = (int32_t)_mm_cvtsd_f64(_mm_unpackhi_pd(vbest_a, vbest_a));
        if (b1 > b0 || (b1 == b0 && a1 < a0)) { b0 = b1; a0 = a1; }
        best = b0;
        best_a = a0;
    }
#endif
    for (; a < A; a++) {
        score = azero_puct_score(visits[a], value_sum[a], c_sqrt * (double)prior[a], fpu);
        if (score > best && index[a] != AZERO_ILLEGAL) {
            best = score;
            best_a = (int32_t)a;
        }
    }
    return best_a;
}

static void azero_store_priors(Py_ssize_t A, const float *pr, const uint8_t *lg, double total,
                               int32_t count, int32_t *index, float *prior)
{
    Py_ssize_t a = 0;
    /* UNEXPANDED where legal, ILLEGAL elsewhere, without a branch. */
    for (a = 0; a < A; a++)
        index[a] = lg[a] ? AZERO_UNEXPANDED : AZERO_ILLEGAL;
    if (!(total > 0.0)) {
        /* All prior mass on illegal actions: fall back to uniform over the legal ones. */
        float p = (float)(1.0 / count);
        for (a = 0; a < A; a++)
            prior[a] = lg[a] ? p : 0.0f;
        return;
    }
    a = 0;
#if defined(__SSE2__)
    const __m128d vt = _mm_set1_pd(total);
    for (; a + 1 < A; a += 2) {
        __m128d x = _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(pr + a))));
        __m128 p = _mm_cvtpd_ps(_mm_div_pd(x, vt));
        float p2[4];
        _mm_storeu_ps(p2, p);
        prior[a] = lg[a] ? p2[0] : 0.0f;
        prior[a + 1] = lg[a + 1] ? p2[1] : 0.0f;
    }
#endif
    for (; a < A; a++)
        prior[a] = lg[a] ? (float)((double)pr[a] / total) : 0.0f;
}

#endif  /* AZERO_MCTS_SIMD_H */
