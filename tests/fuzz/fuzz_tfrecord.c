/* TFRecord framing and tf.train.Example (formats/tfrecord.c): the input as one framed
 * record (tfrecord_check_record) and as one Example (tfrecord_example_decode), then the
 * tfrecord format reading it as a file.
 *
 * Input: the bytes of one tfrecord file, found in a data folder as `generate = never` finds a
 * dataset: probed, indexed, opened and read sample by sample through the format plug-in. */
#include <stddef.h>
#include <stdint.h>

#include "../../formats/tfrecord.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_mpi_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfrecord_arena a = {0};
	struct tfrecord_example ex;
	uint64_t len;

	if (tfrecord_check_record(data, size, &len) == 0)
		tfrecord_example_decode(data + TFRECORD_HEADER_BYTES, (size_t)len, &a, &ex);
	tfrecord_example_decode(data, size, &a, &ex);
	tfrecord_arena_free(&a);
	fuzz_clean();
	fuzz_write("data", "input.tfrecord", data, size);
	fuzz_read_dataset("tfrecord", "data");
	return 0;
}
