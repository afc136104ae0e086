/* zip central directory and local headers of npz files (formats/npz.c), and the NPY
 * headers of their members.
 *
 * Input: the bytes of one npz file, found in a data folder as `generate = never` finds a
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
	fuzz_write("data", "input.npz", data, size);
	fuzz_read_dataset("npz", "data");
	return 0;
}
