/* TFRecord decode throughput on one core, on data already in memory: what feedbench's tfrecord
 * reader adds to every read (both CRC32C checks, the protobuf-c decode of the Example, the copy
 * of the image bytes out). The target (docs/performance.md): >= 1 GB/s per core.
 *
 *   tfrecord_decode [RECORD_BYTES [TOTAL_MiB [ROUNDS]]] [--min GB/s]
 *
 * Prints one line per stage (GB/s = 10^9 bytes of framed records per second, best of ROUNDS)
 * and exits 1 when the full decode is below --min. Not a ctest: timings do not belong there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timer.h"
#include "formats/sample.h"
#include "formats/tfrecord.h"

struct corpus {
	uint8_t *buf;
	size_t *off; /* n + 1 record offsets */
	size_t n;
};

static int corpus_build(struct corpus *c, size_t rec, size_t total)
{
	size_t framed = tfrecord_example_size(rec, 0) + TFRECORD_FRAME_BYTES + 16;
	uint8_t *img = malloc(rec ? rec : 1);
	uint64_t s = 42;
	size_t pos = 0;

	c->n = total / framed ? total / framed : 1;
	c->buf = malloc(c->n * framed);
	c->off = malloc((c->n + 1) * sizeof(*c->off));
	if (!img || !c->buf || !c->off)
		return -1;
	for (size_t i = 0; i < c->n; i++) {
		size_t exlen;

		for (size_t k = 0; k < rec; k += 8) {
			uint64_t r = splitmix64(&s);

			memcpy(img + k, &r, rec - k < 8 ? rec - k : 8);
		}
		c->off[i] = pos;
		exlen = tfrecord_example_encode(c->buf + pos + TFRECORD_HEADER_BYTES, img, rec,
						(int64_t)i);
		tfrecord_put_header(c->buf + pos, exlen);
		tfrecord_put_footer(c->buf + pos + TFRECORD_HEADER_BYTES + exlen,
				    c->buf + pos + TFRECORD_HEADER_BYTES, exlen);
		pos += exlen + TFRECORD_FRAME_BYTES;
	}
	c->off[c->n] = pos;
	free(img);
	return 0;
}

enum stage { STAGE_FULL, STAGE_CRC, STAGE_DECODE };

/* One pass over the corpus; returns seconds, or a negative value on a decode failure. */
static double pass(const struct corpus *c, enum stage st, struct tfrecord_arena *a, uint8_t *out,
		   size_t cap)
{
	uint64_t t0 = timer_now_ns();

	for (size_t i = 0; i < c->n; i++) {
		const uint8_t *rec = c->buf + c->off[i];
		size_t reclen = c->off[i + 1] - c->off[i];
		uint64_t len = reclen - TFRECORD_FRAME_BYTES;
		struct tfrecord_example ex;

		if (st != STAGE_DECODE && tfrecord_check_record(rec, reclen, &len) < 0)
			return -1;
		if (st == STAGE_CRC)
			continue;
		if (tfrecord_example_decode(rec + TFRECORD_HEADER_BYTES, len, a, &ex) < 0 ||
		    !ex.has_image || ex.image_len > cap)
			return -1;
		memcpy(out, ex.image, ex.image_len);
	}
	return timer_ns_to_s(timer_now_ns() - t0);
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"full (2 CRCs + decode + copy)", "CRCs only",
					    "decode + copy only"};
	size_t rec = 128 * 1024, total = 512u << 20;
	int rounds = 3, npos = 0;
	double min = 0, full = 0;
	struct tfrecord_arena a = {0};
	struct corpus c;
	uint8_t *out;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--min") == 0 && i + 1 < argc)
			min = atof(argv[++i]);
		else if (npos == 0 && ++npos)
			rec = strtoull(argv[i], NULL, 0);
		else if (npos == 1 && ++npos)
			total = strtoull(argv[i], NULL, 0) << 20;
		else if (npos == 2 && ++npos)
			rounds = atoi(argv[i]);
		else {
			fprintf(stderr,
				"usage: %s [RECORD_BYTES [TOTAL_MiB [ROUNDS]]] [--min GB/s]\n",
				argv[0]);
			return 2;
		}
	}
	if (rounds < 1)
		rounds = 1;
	out = malloc(rec ? rec : 1);
	if (!out || corpus_build(&c, rec, total) < 0) {
		fprintf(stderr, "tfrecord_decode: out of memory\n");
		return 1;
	}
	printf("tfrecord_decode: %zu records of %zu image bytes (%.1f MiB framed), best of %d\n",
	       c.n, rec, (double)c.off[c.n] / 1048576.0, rounds);
	for (int st = STAGE_FULL; st <= STAGE_DECODE; st++) {
		double best = 0;

		for (int r = 0; r < rounds; r++) {
			double s = pass(&c, (enum stage)st, &a, out, rec);

			if (s < 0) {
				fprintf(stderr, "tfrecord_decode: a record failed to decode\n");
				return 1;
			}
			if (best == 0 || s < best)
				best = s;
		}
		double gbps = best > 0 ? (double)c.off[c.n] / best / 1e9 : 0;
		if (st == STAGE_FULL)
			full = gbps;
		printf("  %-30s %8.2f GB/s per core\n", names[st], gbps);
	}
	tfrecord_arena_free(&a);
	free(c.buf);
	free(c.off);
	free(out);
	if (min > 0 && full < min) {
		printf("tfrecord_decode: %.2f GB/s is below the %.2f GB/s target\n", full, min);
		return 1;
	}
	return 0;
}
