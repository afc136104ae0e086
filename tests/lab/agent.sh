#!/bin/bash
# Open MPI's remote-shell agent for the lab's emulated hosts (--mca plm_rsh_agent):
#   agent.sh HOST CMD...
# runs CMD, as ssh would, on emulated host HOST (labh1, labh2): in that host's network
# namespace, with its own hostname, and with that host's own ceph-fuse mount bound onto the
# common path $FEEDBENCH_LAB_DIR/cephfs (so every host sees "the" file system at one path, each
# through its own client).
set -u
ID=${FEEDBENCH_LAB_ID:-main}
LAB=${FEEDBENCH_LAB_DIR:-/tmp/feedbench-lab-$ID}
host=$1
shift
case $host in
labh[0-9]*) ns=fblab-$ID-${host#lab} ;;
*)
	echo "agent.sh: '$host' is not a lab host (labh1, labh2)" >&2
	exit 255
	;;
esac
[ -e "/run/netns/$ns" ] || {
	echo "agent.sh: host $host is down (no namespace $ns; is the lab up?)" >&2
	exit 255
}
exec ip netns exec "$ns" unshare --uts --mount sh -c \
	"hostname '$host' && mount --bind '$LAB/mnt/${host#lab}' '$LAB/cephfs' && $*"
