#!/bin/sh
# The virtual environment of the S3 tests (tests/s3/): moto's S3 server and boto3, BUILD_DIR/venv-s3:
#   tests/interop/setup_venv_s3.sh BUILD_DIR
# made by setup_venv.sh (exit 0 when ready, 1 when it cannot be made). Its own venv so that the
# interop venv's packages (and their stamp) stay as they are. moto's S3 part plus Flask is all
# its server needs for S3 and the IAM calls of s3.auth; moto[server] would add the
# CloudFormation, Docker and X-Ray clients (127 s and 317 MiB to make, against about 20 s and
# 140 MiB).
FEEDBENCH_BUILD_DIR=${1:?usage: $0 BUILD_DIR} exec sh "$(dirname "$0")/setup_venv.sh" venv-s3 \
	"moto[s3]==5.2.5" flask==3.1.3 flask-cors==6.0.5 boto3==1.44.8
