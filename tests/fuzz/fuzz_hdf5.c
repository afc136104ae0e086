/* HDF5 open on hostile files (formats/hdf5.c): the records dataset and its geometry
 * found by the probe, then hyperslab reads. HDF5's own parser is not instrumented for
 * coverage (a Debian library) but runs under the sanitizers' interceptors.
 *
 * Input: the bytes of one hdf5 file, found in a data folder as `generate = never` finds a
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
	fuzz_write("data", "input.h5", data, size);
	fuzz_read_dataset("hdf5", "data");
	return 0;
}
