/* The index of a TFRecord file (formats/tfrecord.c): the text "<offset> <length>" a line that
 * DLIO and feedbench write beside a .tfrecord, trusted for where each record is.
 *
 * Input: the bytes of input.tfrecord.idx. The TFRecord itself is fixed: three valid records
 * (tests/fuzz/companions/three.tfrecord). Discovered, indexed from the .idx, and read record by
 * record through the tfrecord format, as the tfrecord target does.
 */
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
	fuzz_copy("companions/three.tfrecord", "data");
	fuzz_write("data", "three.tfrecord.idx", data, size);
	fuzz_read_dataset("tfrecord", "data");
	return 0;
}
