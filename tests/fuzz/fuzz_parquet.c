/* Parquet (formats/parquet_meta.c, parquet_pages.c, parquet.c): the input is parsed as a
 * FileMetaData, as a run of page headers and as one column chunk of each kind of column the
 * reader handles (a LIST of INT32 of 8 bits, an optional byte array, a required FLOAT), then
 * read as a file found in a data folder (`generate = never`): footer, probe, index, every row.
 *
 * The first input byte picks the chunk's codec; every invariant is the sanitizers' (no read
 * outside the input, no leak) plus: a chunk that decodes has one offset per row, increasing. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../formats/parquet.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_mpi_init();
	return 0;
}

static void fuzz_chunks(const uint8_t *data, size_t size)
{
	static const int codecs[] = {PQ_CODEC_NONE, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP, PQ_CODEC_ZSTD};
	const struct pq_column cols[] = {
	    {.name = "l", .type = PQ_INT32, .width = 1, .max_def = 3, .max_rep = 1},
	    {.name = "b", .type = PQ_BYTE_ARRAY, .width = 0, .max_def = 1},
	    {.name = "f", .type = PQ_FLOAT, .width = 4},
	};
	struct pq_decoded d = {0};
	char why[256];
	uint64_t bad;

	if (size < 2)
		return;
	for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
		struct pq_chunk ck = {.start = 1,
				      .size = size - 1,
				      .num_values = data[1] * 4u,
				      .codec = codecs[data[0] & 3],
				      .type = cols[c].type};

		if (pq_chunk_decode(&cols[c], &ck, data + 1, size - 1, data[1], &d, why,
				    sizeof(why), &bad) == 0) {
			for (uint64_t r = 0; r < d.nrows; r++)
				FUZZ_EXPECT(d.row_off[r] <= d.row_off[r + 1], "row %lu",
					    (unsigned long)r);
			FUZZ_EXPECT(d.row_off[d.nrows] == d.vals.len, "end of rows");
		}
	}
	pq_decoded_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pq_meta m;
	struct pq_page pg;
	struct pq_rd r;
	char why[256];
	uint64_t bad;

	if (pq_meta_parse(data, size, 0, size, &m, why, sizeof(why), &bad) == 0) {
		FUZZ_EXPECT(m.rg_first[m.nrg] == m.num_rows, "row count");
		pq_meta_free(&m);
	}
	pq_rd_init(&r, data, size, 0);
	while (r.p < r.end && pq_page_parse(&r, &pg) == 0)
		;
	fuzz_chunks(data, size);
	fuzz_clean();
	fuzz_write("data", "input.parquet", data, size);
	fuzz_read_dataset("parquet", "data");
	return 0;
}
