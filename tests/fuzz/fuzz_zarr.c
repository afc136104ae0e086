/* Zarr metadata and shard indexes (formats/zarr_meta.c): the input's first byte picks the
 * version (odd: 3, zarr.json; even: 2, .zarray), the rest up to a NUL byte is the metadata text
 * and what follows the NUL the end of a shard file. The text is parsed; when it parses, its
 * chunk keys are formed and the shard's last bytes are taken as the index of that array; then the
 * array is read as a folder found in a data folder
 * (`generate = never`: probe, index, every sample, its chunks missing, so read as fill values).
 *
 * Invariants besides the sanitizers': a parsed array has chunks of at least one sample, and an
 * accepted shard index points only inside the shard's data bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../formats/zarr.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_mpi_init();
	return 0;
}

static void fuzz_index(const struct zarr_meta *m, const uint8_t *data, size_t size)
{
	size_t ib = zarr_shard_index_bytes(m);
	uint64_t off[64], lens[64], fsize = size + 100;
	char why[256];

	if (!m->shard || m->shard > 64 || ib > size)
		return;
	if (zarr_shard_index_parse(m, data + size - ib, ib, fsize, off, lens, why, sizeof(why)) < 0)
		return;
	for (uint64_t i = 0; i < m->shard; i++)
		FUZZ_EXPECT(off[i] == UINT64_MAX ||
				(off[i] <= fsize - ib && lens[i] <= fsize - ib - off[i]),
			    "entry %lu inside the shard", (unsigned long)i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zarr_meta m;
	char why[256], key[64];
	const uint8_t *nul;
	size_t tlen;
	int version;

	if (size < 1)
		return 0;
	version = (data[0] & 1) ? 3 : 2;
	nul = memchr(data + 1, 0, size - 1);
	tlen = nul ? (size_t)(nul - data) - 1 : size - 1;
	if (zarr_meta_parse((const char *)data + 1, tlen, version, &m, why, sizeof(why)) == 0) {
		FUZZ_EXPECT(m.chunk >= 1, "chunks of %lu samples", (unsigned long)m.chunk);
		zarr_chunk_key(&m, m.nsamples, key, sizeof(key));
		if (nul)
			fuzz_index(&m, nul + 1, size - tlen - 2);
	}
	fuzz_clean();
	fuzz_write("data/input.zarr", version == 3 ? "zarr.json" : ".zarray", data + 1, tlen);
	fuzz_read_dataset("zarr", "data");
	return 0;
}
