/* NPY headers (formats/npy.c): npy_preamble() and npy_parse() on the input itself, then
 * the npy format reading it as a file.
 *
 * Input: the bytes of one npy file, found in a data folder as `generate = never` finds a
 * dataset: probed, indexed, opened and read sample by sample through the format plug-in. */
#include <stddef.h>
#include <stdint.h>

#include "../../formats/npy.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_mpi_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_header h;
	char why[256];

	if (npy_preamble(data, size, 0, &h, why, sizeof(why)) == 0 && h.data_off <= size)
		npy_parse(data, size, 0, &h, why, sizeof(why));
	fuzz_clean();
	fuzz_write("data", "input.npy", data, size);
	fuzz_read_dataset("npy", "data");
	return 0;
}
