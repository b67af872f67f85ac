# SPDX-License-Identifier: BSD-3-Clause
"""Acceptance bounds for "the flows follow the weights".

With a uniform flow hash, each new flow lands on backend i independently
with probability p_i = w_i / sum(w) (its share of the Maglev table, which
matches the weight share to within about 0.1 percentage point at M = 65537,
far below the sampling noise here), so backend i's count over n flows is
Binomial(n, p_i). A test that checks k counts accepts each inside its
central interval of probability 1 - alpha/k (Bonferroni), so a correct
daemon fails the whole test with probability at most alpha. The bounds
are exact binomial quantiles, not a normal approximation."""
import math

# Probability that a correct daemon fails one test because of sampling
# noise alone: once in a million runs.
ALPHA = 1e-6


def _log_pmf(n, p, x):
    return (math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
            + x * math.log(p) + (n - x) * math.log1p(-p))


def bounds(n, p, tail):
    """Smallest lo and largest hi such that P(X < lo) <= tail and
    P(X > hi) <= tail, for X ~ Binomial(n, p)."""
    if p <= 0:
        return 0, 0
    if p >= 1:
        return n, n
    pmf = [math.exp(_log_pmf(n, p, x)) for x in range(n + 1)]
    lo, acc = 0, 0.0
    while lo < n and acc + pmf[lo] <= tail:
        acc += pmf[lo]
        lo += 1
    hi, acc = n, 0.0
    while hi > 0 and acc + pmf[hi] <= tail:
        acc += pmf[hi]
        hi -= 1
    return lo, hi


def check_counts(counts, weights, checks=1, alpha=ALPHA):
    """counts: {backend: flows}; weights: {backend: weight} (every backend
    that may take new flows). checks: how many such calls the test makes
    (they share alpha). Returns a list of human-readable problems (empty:
    consistent with the weights)."""
    problems = []
    stray = set(counts) - set(weights)
    if stray:
        problems.append("flows reached backends without weight: %s"
                        % sorted(stray))
    n = sum(counts.values())
    total_w = sum(weights.values())
    k = len(weights) * checks
    for name, w in sorted(weights.items()):
        p = w / total_w
        lo, hi = bounds(n, p, alpha / (2 * k))
        got = counts.get(name, 0)
        if not lo <= got <= hi:
            problems.append("%s: %d of %d flows, expected %.1f (weight share "
                            "%.3f), acceptable %d..%d"
                            % (name, got, n, n * p, p, lo, hi))
    return problems


def describe(counts, weights):
    n = sum(counts.values())
    total_w = sum(weights.values())
    return ", ".join("%s %d (%.1f%%, weight %.1f%%)" % (
        name, counts.get(name, 0), 100.0 * counts.get(name, 0) / max(n, 1),
        100.0 * weights[name] / total_w) for name in sorted(weights))
