/* jpeg images (formats/jpeg.c): the input is one image file found in a data folder as
 * `generate = never` finds a dataset: probed, opened, read and decoded (`[format.image]
 * decode = true`) through the format plug-in. */
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
	fuzz_write("data", "input.jpeg", data, size);
	/* The oracle: the sanitizers, and fuzz_read_dataset's FUZZ_EXPECT that no reader claims
	 * more bytes than its buffer holds. */
	fuzz_read_dataset("jpeg", "data");
	return 0;
}
