/* Log-linear histograms and summary statistics. */
#include "stats.h"

#include <math.h>
#include <string.h>

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

unsigned hist_bucket_of(uint64_t ns)
{
	if (ns < HIST_SUB)
		return (unsigned)ns;
	unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
	unsigned group = msb - HIST_SUB_BITS + 1;
	unsigned sub = (unsigned)(ns >> (msb - HIST_SUB_BITS)) & (HIST_SUB - 1);
	return group * HIST_SUB + sub;
}

uint64_t hist_bucket_upper_ns(unsigned b)
{
	if (b < HIST_SUB)
		return b + 1;
	unsigned group = b / HIST_SUB, sub = b % HIST_SUB;
	unsigned shift = group - 1;
	uint64_t lower = (uint64_t)(HIST_SUB + sub) << shift;
	return lower + (1ull << shift);
}

void hist_add(struct hist *h, uint64_t ns)
{
	h->bucket[hist_bucket_of(ns)]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (unsigned b = 0; b < HIST_BUCKETS; b++)
		dst->bucket[b] += src->bucket[b];
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
}

double hist_quantile(const struct hist *h, double q)
{
	if (h->count == 0)
		return 0;
	uint64_t want = (uint64_t)ceil(q * (double)h->count);
	uint64_t seen = 0;

	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= want) {
			uint64_t up = hist_bucket_upper_ns(b);
			return (double)(up < h->max_ns ? up : h->max_ns) / 1e9;
		}
	}
	return (double)h->max_ns / 1e9;
}

void io_stats_reset(struct io_stats *s)
{
	memset(s, 0, sizeof(*s));
}

void io_stats_merge(struct io_stats *dst, const struct io_stats *src)
{
	dst->bytes += src->bytes;
	dst->ops += src->ops;
	dst->opens += src->opens;
	dst->open_ns += src->open_ns;
	dst->samples += src->samples;
	dst->retries += src->retries;
	if (src->inflight_max > dst->inflight_max)
		dst->inflight_max = src->inflight_max;
	hist_merge(&dst->latency, &src->latency);
	hist_merge(&dst->ttfb, &src->ttfb);
	dst->wbytes += src->wbytes;
	dst->wops += src->wops;
	dst->creates += src->creates;
	dst->create_ns += src->create_ns;
	dst->syncs += src->syncs;
	dst->sync_ns += src->sync_ns;
	dst->meta_ops += src->meta_ops;
	dst->meta_ns += src->meta_ns;
	hist_merge(&dst->wlatency, &src->wlatency);
	dst->decodes += src->decodes;
	dst->decode_ns += src->decode_ns;
	dst->decode_cpu_ns += src->decode_cpu_ns;
	dst->decode_bytes += src->decode_bytes;
}

struct summary_stat stat_summarise(const double *v, int n)
{
	struct summary_stat s = {0};

	if (n <= 0)
		return s;
	s.n = n;
	s.min = s.max = v[0];
	for (int i = 0; i < n; i++) {
		s.mean += v[i];
		if (v[i] < s.min)
			s.min = v[i];
		if (v[i] > s.max)
			s.max = v[i];
	}
	s.mean /= n;
	if (n > 1) {
		double ss = 0;
		for (int i = 0; i < n; i++)
			ss += (v[i] - s.mean) * (v[i] - s.mean);
		s.stddev = sqrt(ss / (n - 1));
	}
	return s;
}
