#!/bin/sh
# The virtual environment of the interop tests (and compare.junit's lxml), BUILD_DIR/venv:
#   tests/interop/setup_venv_interop.sh BUILD_DIR
# made by setup_venv.sh (exit 0 when ready, 1 when it cannot be made).
FEEDBENCH_BUILD_DIR=${1:?usage: $0 BUILD_DIR} exec sh "$(dirname "$0")/setup_venv.sh" venv \
	numpy h5py webdataset tfrecord crc32c protobuf pytest lxml pyarrow Pillow zarr
