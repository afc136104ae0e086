/* tar headers of WebDataset shards (formats/wds.c): ustar, GNU long names, pax
 * records, checksums, sizes, sample grouping by member name.
 *
 * Input: the bytes of one wds file, found in a data folder as `generate = never` finds a
 * dataset: probed, indexed, opened and read sample by sample through the format plug-in. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_mpi_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_clean();
	fuzz_write("data", "input.tar", data, size);
	fuzz_read_dataset("wds", "data");
	return 0;
}
