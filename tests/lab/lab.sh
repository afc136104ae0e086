#!/bin/bash
# The lab: a single-machine CephFS whose OSDs each sit behind their own rate-limited link, and
# two emulated hosts (network namespaces with their own hostnames and their own ceph-fuse
# client) that Open MPI launches ranks into over TCP. Started and stopped by the lab tests
# (ctest fixtures) and by `make lab-up` / `make lab-down`.
#
# usage: lab.sh up | down | status | check | env | ceph ARGS... | exec HOST CMD... |
#               mpirun ARGS... | osd-of-file PATH | s3 /BUCKET[/KEY] CURL-ARGS... | rgw-admin ARGS... | rgw-gc
#
# All state lives under $FEEDBENCH_LAB_DIR (default /tmp/feedbench-lab-<id>); every network
# namespace is named fblab-<id>-*, so several labs (two build trees) never meet. Addresses
# exist only inside those namespaces: the root namespace has no address or route into them and
# no namespace has a default route, so nothing the lab does can leave the machine.
#
# Topology (one bridge namespace joins the others):
#   fblab-ID-br    bridge br0
#   fblab-ID-mon   10.213.0.1   ceph-mon, ceph-mds
#   fblab-ID-osdN  10.213.0.1N  one ceph-osd each; egress (the read direction) shaped to
#                               FEEDBENCH_LAB_OSD_MIBS MiB/s by tc tbf
#   fblab-ID-h1/h2 10.213.0.101/102  emulated hosts labh1, labh2: one ceph-fuse client each,
#                               mounted at $LAB/mnt/<host>; ranks see it at $LAB/cephfs
#   fblab-ID-head  10.213.0.100 where mpirun runs (so its daemons reach it over TCP); radosgw
#                               (Ceph's S3 gateway, port 7480) on the same RADOS cluster, so its
#                               objects sit behind the same rate-limited OSD links
#
# Exit status: 0 done, 1 failed, 77 the lab cannot run here (the reason is printed and kept in
# $LAB/skip-reason, and the lab tests report SKIPPED with it).
set -u
set -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ID=${FEEDBENCH_LAB_ID:-main}
LAB=${FEEDBENCH_LAB_DIR:-/tmp/feedbench-lab-$ID}
NS=fblab-$ID
OSDS=${FEEDBENCH_LAB_OSDS:-4}
OSD_MIBS=${FEEDBENCH_LAB_OSD_MIBS:-24}
HOSTS="h1 h2"
NET=10.213.0
MON_IP=$NET.1
CONF=$LAB/ceph.conf
RGW_ADDR=$NET.100
RGW_PORT=7480
RGW_NAME=client.rgw.lab
RGW_BUCKET=fblab
SKIP=77

log() { echo "lab: $*" >&2; }
die() {
	log "$*"
	exit 1
}

# ---------------------------------------------------------------- checks

# Prints why the lab cannot run here, or nothing.
why_not() {
	local b
	[ "${FEEDBENCH_LAB:-on}" != off ] || {
		echo "FEEDBENCH_LAB=off"
		return
	}
	[ "$(id -u)" = 0 ] || {
		echo "the lab needs root (network namespaces, mounts)"
		return
	}
	[ -c /dev/fuse ] || {
		echo "no /dev/fuse (ceph-fuse needs it)"
		return
	}
	for b in ceph-mon ceph-osd ceph-mds ceph-fuse ceph monmaptool ceph-authtool setfattr \
		getfattr ip tc nsenter unshare uuidgen mpirun radosgw radosgw-admin osdmaptool curl; do
		command -v "$b" >/dev/null 2>&1 || {
			echo "'$b' is not installed (make lab-deps installs the lab's packages)"
			return
		}
	done
	if ! ip netns add "$NS-probe" 2>/dev/null; then
		echo "cannot create a network namespace (ip netns add failed)"
		return
	fi
	ip netns del "$NS-probe" 2>/dev/null
}

# ---------------------------------------------------------------- helpers

nsx() { # nsx NAME CMD...: run CMD in namespace fblab-ID-NAME (network only)
	local n=$1
	shift
	ip netns exec "$NS-$n" "$@"
}

ceph_cli() { # the ceph CLI, from the monitor's namespace
	nsx mon timeout 30 ceph -c "$CONF" --connect-timeout 10 "$@"
}

wait_for() { # wait_for SECONDS WHAT CMD...
	local t=$1 what=$2 end
	shift 2
	end=$((SECONDS + t))
	while ((SECONDS < end)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	die "timed out after ${t}s waiting for $what (logs: $LAB/log)"
}

# Processes that belong to this lab: every process in one of its network namespaces (daemons,
# ceph-fuse, mpirun and the ranks it launched), and any process whose command line names the
# lab folder (found by pid file or by /proc), never the caller itself.
lab_pids() {
	local n p
	{
		for n in $(lab_netns); do ip netns pids "$n" 2>/dev/null; done
		cat "$LAB"/run/*.pid 2>/dev/null
		echo
		grep -lsF -- "$LAB/" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3
	} | sort -u | while read -r p; do
		[ -n "$p" ] && [ "$p" != $$ ] && [ "$p" != "$BASHPID" ] || continue
		[ "$p" = "${LAB_KEEP_PID:-}" ] && continue
		if grep -qsF -- "$LAB/" "/proc/$p/cmdline" || in_lab_netns "$p"; then
			echo "$p"
		fi
	done
}

lab_netns() { ip netns list 2>/dev/null | awk -v p="$NS-" 'index($1, p) == 1 { print $1 }'; }

in_lab_netns() {
	local me n
	me=$(stat -L -c %i "/proc/$1/ns/net" 2>/dev/null) || return 1
	for n in $(lab_netns); do
		[ "$(stat -L -c %i "/run/netns/$n" 2>/dev/null)" = "$me" ] && return 0
	done
	return 1
}

lab_mounts() { # mount points under the lab folder, deepest first
	awk -v lab="$LAB/" 'index($2, lab) == 1 { print $2 }' /proc/self/mounts | sort -r
}

# ---------------------------------------------------------------- down

# wait_gone SECONDS PID...: waits until every PID has exited (gone, or a zombie: it has exited
# and only waits for its parent) or SECONDS have passed; prints the pids still running.
wait_gone() {
	local secs=$1 i p alive
	shift
	for ((i = 0; i <= secs * 10; i++)); do
		alive=""
		for p in "$@"; do
			[ -d "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] &&
				alive="$alive $p"
		done
		[ -z "$alive" ] && return 0
		sleep 0.1
	done
	echo "$alive"
}

# describe_pids PID...: " PID (name)" for each.
describe_pids() {
	local p
	for p in "$@"; do printf ' %s (%s)' "$p" "$(cat "/proc/$p/comm" 2>/dev/null || echo gone)"; done
}

down() {
	local pids p i m n pass alive
	[ -d "$LAB" ] || [ -n "$(lab_netns)" ] || {
		log "down: nothing to stop"
		return 0
	}
	rm -f "$LAB/up" "$LAB/starting"
	for m in $(lab_mounts); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	# Every process of the lab gets TERM and up to DOWN_WAIT seconds (default 10) to exit, then
	# KILL by pid, with a message, and up to 5 s more; a later pass catches what started
	# meanwhile. down returns only when none is left (or fails naming them).
	local stopped=""
	for pass in 1 2 3; do
		pids=$(lab_pids)
		[ -n "$pids" ] || break
		stopped="$stopped $pids"
		kill $pids 2>/dev/null
		alive=$(wait_gone "${DOWN_WAIT:-10}" $pids)
		[ -n "$alive" ] || continue
		log "down: still running after ${DOWN_WAIT:-10} s, killing:$(describe_pids $alive)"
		kill -9 $alive 2>/dev/null
		alive=$(wait_gone 5 $alive)
		[ -z "$alive" ] || die "down: still running after SIGKILL:$(describe_pids $alive)"
	done
	pids=$(lab_pids)
	[ -z "$pids" ] || die "down: processes left:$(describe_pids $pids)"
	# A killed daemon is a zombie until its parent reaps it (pgrep still lists it): wait for
	# that too, up to 5 s.
	for ((i = 0; i < 50; i++)); do
		alive=""
		for p in $stopped; do [ -d "/proc/$p" ] && alive="$alive $p"; done
		[ -z "$alive" ] && break
		sleep 0.1
	done
	[ -z "$alive" ] || log "down: exited but not yet reaped by their parent:$(describe_pids $alive)"
	for m in $(lab_mounts); do
		umount -l "$m" 2>/dev/null
	done
	for n in $(lab_netns); do
		ip netns del "$n" 2>/dev/null
	done
	if [ -n "$(lab_mounts)" ]; then
		die "down: still mounted: $(lab_mounts | tr '\n' ' ')"
	fi
	if [ -n "${KEEP_LAB_LOGS:-}" ]; then
		rm -rf "$LAB/osd" "$LAB/mon" "$LAB/mds" "$LAB/run"
	else
		rm -rf "$LAB"
	fi
	log "down: stopped"
}

# ---------------------------------------------------------------- up

write_conf() {
	cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon initial members = a
mon host = $MON_IP
public network = $NET.0/24
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = false
ms bind ipv6 = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd crush initial weight = 1
run dir = $LAB/run
admin socket = $LAB/run/\$name.asok
pid file = $LAB/run/\$name.pid
log file = $LAB/log/\$name.log
mon data = $LAB/mon/\$id
osd data = $LAB/osd/\$id
mds data = $LAB/mds/\$id
keyring = $LAB/keyring
osd objectstore = memstore
memstore device bytes = 2147483648
osd max object size = 268435456
osd memory target = 268435456
osd op num shards = 1
osd op num threads per shard = 2
mon osd down out interval = 0
mon data avail warn = 1
mon data avail crit = 0
debug ms = 0
[client]
client oc = false
client readahead max bytes = 16777216
fuse default permissions = false
[$RGW_NAME]
rgw frontends = beast endpoint=$RGW_ADDR:$RGW_PORT
ms mon client mode = crc
rgw data = $LAB/rgw/data
rgw gc obj min wait = 0
EOF
}

make_netns() {
	local n i
	ip netns add "$NS-br"
	nsx br ip link add br0 type bridge
	nsx br ip link set br0 up
	nsx br ip link set lo up
	# name:address pairs; OSDs get 10.213.0.1N
	local members="mon:1 head:100 h1:101 h2:102"
	for ((i = 0; i < OSDS; i++)); do members="$members osd$i:$((10 + i))"; done
	for m in $members; do
		n=${m%%:*}
		ip netns add "$NS-$n"
		ip link add eth0 netns "$NS-$n" type veth peer name "p-$n" netns "$NS-br"
		nsx br ip link set "p-$n" master br0
		nsx br ip link set "p-$n" up
		nsx "$n" ip link set lo up
		nsx "$n" ip addr add "$NET.${m#*:}/24" dev eth0
		nsx "$n" ip link set eth0 up
	done
	# Each OSD's own bottleneck: what it sends (the data of every read) leaves through a
	# token bucket of OSD_MIBS MiB/s.
	shape "$OSD_MIBS"
}

# shape MIBS: every OSD's egress limited to MIBS MiB/s on the wire (0: unshaped).
shape() {
	local i
	for ((i = 0; i < OSDS; i++)); do
		nsx "osd$i" tc qdisc del dev eth0 root 2>/dev/null
		[ "$1" = 0 ] && continue
		nsx "osd$i" tc qdisc add dev eth0 root tbf rate "$(($1 * 1048576 * 8))bit" \
			burst 256kb latency 200ms || return 1
	done
}

start_mon() {
	monmaptool --create --clobber --fsid "$FSID" --addv a "[v2:$MON_IP:3300,v1:$MON_IP:6789]" \
		"$LAB/monmap" >/dev/null || die "monmaptool failed"
	ceph-authtool --create-keyring "$LAB/keyring" --gen-key -n mon. --cap mon 'allow *' \
		>/dev/null || die "ceph-authtool failed"
	nsx mon ceph-mon -c "$CONF" --mkfs -i a --monmap "$LAB/monmap" --keyring "$LAB/keyring" \
		>"$LAB/log/mkfs-mon.log" 2>&1 || die "ceph-mon --mkfs failed (log/mkfs-mon.log)"
	nsx mon ceph-mon -c "$CONF" -i a >"$LAB/log/start-mon.log" 2>&1 || die "ceph-mon did not start (log/mon.a.log)"
	wait_for 30 "the monitor" ceph_cli mon stat
}

start_osds() {
	local i uuid id pids=""
	for ((i = 0; i < OSDS; i++)); do
		uuid=$(uuidgen)
		id=$(ceph_cli osd new "$uuid") || die "ceph osd new failed"
		[ "$id" = "$i" ] || die "osd new gave id '$id', expected $i"
		mkdir -p "$LAB/osd/$i"
		# mkfs and start in parallel: each takes about 2 s, mostly waiting
		(nsx "osd$i" ceph-osd -c "$CONF" -i "$i" --mkfs --osd-uuid "$uuid" \
			>"$LAB/log/mkfs-osd.$i.log" 2>&1 &&
			nsx "osd$i" ceph-osd -c "$CONF" -i "$i" >>"$LAB/log/start-osd.$i.log" 2>&1) &
		pids="$pids $!"
	done
	for i in $pids; do
		wait "$i" || die "an OSD did not start (log/mkfs-osd.*.log, log/start-osd.*.log)"
	done
	wait_for 60 "$OSDS OSDs up" osds_up
}

osds_up() {
	[ "$(ceph_cli osd stat -f json | sed -n 's/.*"num_up_osds":\([0-9]*\).*/\1/p')" = "$OSDS" ]
}

fs_pools() {
	ceph_cli osd pool create cephfs_data 64 >/dev/null 2>&1 || die "pool create failed"
	ceph_cli osd pool create cephfs_metadata 16 >/dev/null 2>&1 || die "pool create failed"
	ceph_cli fs new cephfs cephfs_metadata cephfs_data >/dev/null 2>&1 || die "fs new failed"
}

start_mds() {
	mkdir -p "$LAB/mds/a"
	nsx mon ceph-mds -c "$CONF" -i a >"$LAB/log/start-mds.log" 2>&1 || die "ceph-mds did not start"
	wait_for 60 "the MDS active" mds_active
}

mds_active() { ceph_cli mds stat | grep -q 'up:active'; }

mount_hosts() {
	local h
	for h in $HOSTS; do
		mkdir -p "$LAB/mnt/$h"
		# nsenter --net only: the mount lands in the root mount namespace, the client talks
		# to the cluster from the host's network namespace.
		nsenter --net="/run/netns/$NS-$h" ceph-fuse -c "$CONF" --id "$h" "$LAB/mnt/$h" \
			>"$LAB/log/fuse-$h.out" 2>&1 || die "ceph-fuse for $h failed (log/fuse-$h.out)"
	done
	for h in $HOSTS; do
		wait_for 30 "the ceph-fuse mount of $h" mounted "$LAB/mnt/$h"
	done
}

# Slurm, when installed: slurmctld on the head node, one slurmd per emulated host (entered with
# nsenter --net: under `ip netns exec` slurmd finds no cgroup file system), each slurmd in its
# own UTS and mount namespace with its host's name and its host's ceph-fuse mount bound onto
# $LAB/cephfs, as the agent does for mpirun. auth/none: no munged to run.
have_slurm() { command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v srun >/dev/null; }

write_slurm_conf() {
	local h
	mkdir -p "$LAB/slurm"
	cat >"$LAB/slurm/slurm.conf" <<EOF2
ClusterName=fblab
MailProg=/bin/true
SlurmctldHost=labhead($NET.100)
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$LAB/slurm/ctld
SlurmdSpoolDir=$LAB/slurm/spool-%n
SlurmctldPidFile=$LAB/run/slurmctld.pid
SlurmdPidFile=$LAB/run/slurmd-%n.pid
SlurmctldLogFile=$LAB/log/slurmctld.log
SlurmdLogFile=$LAB/log/slurmd-%n.log
TmpFS=$LAB/slurm/tmp-%n
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig=$LAB/slurm/plugstack.conf
NodeName=labh1 NodeAddr=$NET.101 CPUs=4 State=UNKNOWN
NodeName=labh2 NodeAddr=$NET.102 CPUs=4 State=UNKNOWN
PartitionName=lab Nodes=labh1,labh2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF2
	: >"$LAB/slurm/plugstack.conf"
	for h in $HOSTS; do mkdir -p "$LAB/slurm/spool-lab$h" "$LAB/slurm/tmp-lab$h"; done
	mkdir -p "$LAB/slurm/ctld"
}

# Slurm is an extra: when it does not come up, the rest of the lab stays and lab.srun fails
# with the reason kept in $LAB/slurm/failed.
start_slurm() {
	local h why=""
	have_slurm || return 0
	write_slurm_conf
	nsenter --net="/run/netns/$NS-head" unshare --uts sh -c \
		"hostname labhead && exec slurmctld -f '$LAB/slurm/slurm.conf'" \
		>"$LAB/log/start-slurmctld.log" 2>&1 || why="slurmctld did not start (log/slurmctld.log)"
	for h in $HOSTS; do
		[ -z "$why" ] || break
		nsenter --net="/run/netns/$NS-$h" unshare --uts --mount sh -c \
			"hostname lab$h && mount --bind '$LAB/mnt/$h' '$LAB/cephfs' &&
			exec slurmd -f '$LAB/slurm/slurm.conf' -N lab$h" \
			>"$LAB/log/start-slurmd-$h.log" 2>&1 || why="slurmd lab$h did not start (log/slurmd-lab$h.log)"
	done
	if [ -z "$why" ]; then
		(wait_for 30 "both Slurm nodes idle" slurm_idle) 2>/dev/null ||
			why="the Slurm nodes did not become idle within 30 s (log/slurm*.log)"
	fi
	if [ -n "$why" ]; then
		log "Slurm: $why; the lab goes on without it"
		echo "$why" >"$LAB/slurm/failed"
		for h in "$LAB"/run/slurm*.pid; do [ -f "$h" ] && kill "$(cat "$h")" 2>/dev/null; done
		return 0
	fi
	touch "$LAB/slurm/up"
}

slurm_cli() { # sinfo, srun, ...: from the head node
	local cmd=$1
	shift
	SLURM_CONF=$LAB/slurm/slurm.conf timeout 60 nsenter --net="/run/netns/$NS-head" "$cmd" "$@"
}

slurm_idle() { [ "$(slurm_cli sinfo -h -o %t -N | grep -c idle)" = 2 ]; }

# radosgw, Ceph's S3 gateway, in the head namespace on the lab's own RADOS cluster: an object's
# data lands in the default.rgw.buckets.data pool on the same OSDs, behind the same shaped
# links. `ms mon client mode = crc` (in its section): with the lab's auth none radosgw cannot
# log in to the monitor without it (get_initial_auth_request returned -13, then a 300 s hang).
# Its first start creates its 7 pools. One user with keys made up at each start, one bucket
# (fblab); what clients need goes into the lab's env (lab.sh env) and $LAB/rgw/credentials
# (AWS shared credentials file), mode 600. Runs in the background while the MDS starts,
# the hosts mount and Slurm starts; a radosgw that does not come up leaves the rest of the lab up, its reason in
# $LAB/rgw/failed (the S3 lab tests fail with it).
start_rgw() {
	local t0 t1 t2 ak sk
	trap - EXIT
	t0=$(date +%s.%N)
	mkdir -p "$LAB/rgw/data"
	rgw_data_pool
	t1=$(date +%s.%N)
	nsx head radosgw -c "$CONF" -n "$RGW_NAME" >"$LAB/log/start-rgw.log" 2>&1 ||
		die "radosgw did not start (log/$RGW_NAME.log)"
	wait_for 90 "radosgw answering at $RGW_ADDR:$RGW_PORT" \
		nsx head curl -sf -o /dev/null "http://$RGW_ADDR:$RGW_PORT/"
	t2=$(date +%s.%N)
	ak=FBLAB$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)
	sk=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
	(
		umask 077
		printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$sk" \
			>"$LAB/rgw/credentials"
		printf 'user = "%s:%s"\naws-sigv4 = "aws:amz:default:s3"\nheader = "x-amz-content-sha256: UNSIGNED-PAYLOAD"\n' \
			"$ak" "$sk" >"$LAB/rgw/curl.conf"
		printf 'S3_ENDPOINT=http://%s:%s\nS3_REGION=default\nS3_BUCKET=%s\nAWS_SHARED_CREDENTIALS_FILE=%s\nAWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\n' \
			"$RGW_ADDR" "$RGW_PORT" "$RGW_BUCKET" "$LAB/rgw/credentials" "$ak" "$sk" >"$LAB/rgw/env"
	)
	# the keys go to radosgw-admin's command line (lab-only keys), its answer (the keys again)
	# nowhere
	rgw_admin user create --uid=fblab --display-name="feedbench lab" --access-key="$ak" \
		--secret-key="$sk" >/dev/null || die "radosgw-admin user create failed"
	# the first request right after the user is made may still be refused (403)
	wait_for 20 "the bucket $RGW_BUCKET created" s3 "/$RGW_BUCKET" -sSf -X PUT -o /dev/null
	# seconds: data pool ready, radosgw answering, user and bucket made (from t0)
	echo "$t0 $t1 $t2 $(date +%s.%N)" >"$LAB/rgw/start-times"
	touch "$LAB/rgw/up"
}

# radosgw-admin as radosgw's own client name (its configuration section), without an admin
# socket (radosgw's own is at that name's path)
# rgw's data pool, made before radosgw starts (it would make it at the first PUT) with its PGs
# spread evenly over the OSDs (tests/lab/s3_lab.py data-pool: pg-upmap entries computed by
# osdmaptool, as a real cluster's balancer does). CRUSH alone gave the 32 PGs as 9/8/4/11:
# one OSD held a third of every object, another an eighth.
rgw_data_pool() {
	nsx mon timeout 60 /usr/bin/python3 "$HERE/s3_lab.py" data-pool --conf "$CONF" \
		--dir "$LAB/rgw" >"$LAB/log/rgw-pool.log" 2>&1 ||
		die "rgw's data pool: $(tail -n 1 "$LAB/log/rgw-pool.log") (log/rgw-pool.log)"
}

# radosgw-admin as radosgw's own client name (its configuration section), without an admin
# socket (radosgw's own is at that name's path)
# rgw's data pool, made before radosgw starts (it would make it at the first PUT) with its PGs
# spread evenly over the OSDs by pg-upmap entries, as a real cluster's balancer does; osdmaptool
# computes them (the lab runs no manager). CRUSH alone gave the 32 PGs as 9/8/4/11: one OSD
# held a third of every object, another an eighth.
rgw_data_pool() {
	local pool=default.rgw.buckets.data
	# several commands through one ceph CLI (it reads them from its input): each start of the
	# CLI costs about a second on a loaded machine
	printf '%s\n' "osd pool create $pool 32" "osd pool application enable $pool rgw" \
		"osd set-require-min-compat-client luminous" |
		ceph_cli >"$LAB/log/rgw-pool.log" 2>&1 || die "creating $pool failed (log/rgw-pool.log)"
	ceph_cli osd getmap -o "$LAB/rgw/osdmap" >/dev/null 2>&1 || die "osd getmap failed"
	osdmaptool "$LAB/rgw/osdmap" --upmap "$LAB/rgw/upmap" --upmap-pool $pool \
		--upmap-deviation 1 --upmap-max 32 >"$LAB/log/rgw-upmap.log" 2>&1 ||
		die "osdmaptool --upmap failed (log/rgw-upmap.log)"
	# its lines are "ceph osd pg-upmap-items PG FROM TO"
	sed 's/^ceph //' "$LAB/rgw/upmap" | ceph_cli >>"$LAB/log/rgw-pool.log" 2>&1 ||
		die "pg-upmap-items failed (log/rgw-pool.log)"
}

rgw_admin() { nsx head timeout 60 radosgw-admin -c "$CONF" -n "$RGW_NAME" --admin-socket '' "$@"; }

# s3 /BUCKET[/KEY] CURL-ARGS...: curl from the head namespace on that path of the lab's
# endpoint, signed with the lab user's keys (SigV4).
s3() {
	local path=$1
	shift
	nsx head curl -K "$LAB/rgw/curl.conf" "$@" "http://$RGW_ADDR:$RGW_PORT$path"
}

mounted() { awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts; }

# watch OWNER TTL: tear the lab down when process OWNER (the ctest that started it) is gone or
# after TTL seconds, so that a killed test run leaves nothing running.
watch() {
	local owner=$1 ttl=$2 t=0
	while kill -0 "$owner" 2>/dev/null && ((t < ttl)) &&
		{ [ -f "$LAB/up" ] || [ -f "$LAB/starting" ]; }; do
		sleep 1
		t=$((t + 1))
	done
	[ -f "$LAB/up" ] || [ -f "$LAB/starting" ] || return 0
	log "watch: owner $owner gone or ${ttl}s passed; tearing the lab down"
	FEEDBENCH_LAB_LOCKED= "$HERE/lab.sh" down
}

up() {
	local reason t0 owner=${1:-}
	t0=$(date +%s.%N)
	reason=$(why_not)
	if [ -n "$reason" ]; then
		mkdir -p "$LAB" && echo "$reason" >"$LAB/skip-reason"
		log "cannot start: $reason"
		exit $SKIP
	fi
	if [ -f "$LAB/up" ] && status >/dev/null 2>&1; then
		log "up: already running ($LAB)"
		return 0
	fi
	down >/dev/null 2>&1 # whatever a killed run left behind
	mkdir -p "$LAB"/{run,log,mon,osd,mds,mnt,cephfs,rgw}
	FSID=$(uuidgen)
	if [ -n "$owner" ]; then
		touch "$LAB/starting"
		setsid "$HERE/lab.sh" watch "$owner" "${FEEDBENCH_LAB_TTL:-1800}" \
			</dev/null >>"$LAB/log/watch.log" 2>&1 &
		echo $! >"$LAB/run/watch.pid"
	fi
	write_conf
	trap 'log "up failed; tearing down (logs kept in $LAB/log)"; KEEP_LAB_LOGS=1 down' EXIT
	make_netns || die "network namespaces"
	start_mon
	start_osds
	fs_pools
	# after the file system's pools, so that they keep their ids (CRUSH places a pool's PGs
	# by its id: the CephFS placements stay what they were without radosgw)
	start_rgw >"$LAB/log/rgw-up.log" 2>&1 &
	local rgw_pid=$!
	start_mds
	mount_hosts
	start_slurm
	if ! wait "$rgw_pid"; then
		echo "radosgw did not come up: $(tail -n 1 "$LAB/log/rgw-up.log")" >"$LAB/rgw/failed"
		log "$(cat "$LAB/rgw/failed"); the lab goes on without it"
		[ -f "$LAB/run/$RGW_NAME.pid" ] && kill "$(cat "$LAB/run/$RGW_NAME.pid")" 2>/dev/null
	fi
	trap - EXIT
	# A root folder with a layout nobody asked for would surprise every test: none is set.
	date +%s >"$LAB/up"
	rm -f "$LAB/starting"
	(
		umask 077
		printf 'FEEDBENCH_LAB_ID=%s\nFEEDBENCH_LAB_DIR=%s\nOSDS=%s\nOSD_MIBS=%s\n' \
			"$ID" "$LAB" "$OSDS" "$OSD_MIBS" >"$LAB/env"
		[ -f "$LAB/rgw/up" ] && cat "$LAB/rgw/env" >>"$LAB/env"
	)
	log "up: $OSDS OSDs at $OSD_MIBS MiB/s each, hosts $HOSTS$(rgw_line), in" \
		"$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s ($LAB)"
}

status() {
	local h
	[ -f "$LAB/up" ] || {
		echo "down"
		return 1
	}
	for h in $HOSTS; do
		mounted "$LAB/mnt/$h" || {
			echo "$h: not mounted"
			return 1
		}
	done
	osds_up || {
		echo "not all $OSDS OSDs are up"
		return 1
	}
	mds_active || {
		echo "no active MDS"
		return 1
	}
	echo "up: $OSDS OSDs at $OSD_MIBS MiB/s, hosts $HOSTS, mounts under $LAB/mnt$( [ -f "$LAB/slurm/up" ] && echo ", Slurm (labh1, labh2)")$(rgw_line)"
}

# ", radosgw at URL (...)" when it is up, ", no radosgw: why" when it failed.
rgw_line() {
	if [ -f "$LAB/rgw/up" ]; then
		local rss
		rss=$(awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' \
			"/proc/$(cat "$LAB/run/$RGW_NAME.pid" 2>/dev/null)/status" 2>/dev/null)
		awk -v u="http://$RGW_ADDR:$RGW_PORT" -v rss="${rss:-unknown}" '{
			printf ", radosgw at %s (data pool %.1f s, radosgw answering %.1f s later, user and bucket %.1f s; RSS %s MiB)",
				u, $2 - $1, $3 - $2, $4 - $3, rss }' "$LAB/rgw/start-times"
	elif [ -f "$LAB/rgw/failed" ]; then
		echo ", no radosgw: $(cat "$LAB/rgw/failed")"
	fi
}

# osd-of-file PATH: one line per RADOS object of the file: "object osd".
osd_of_file() {
	local f=$1 ino size objsz nobj i sc su
	ino=$(stat -c %i "$f") || return 1
	size=$(stat -c %s "$f")
	objsz=$(getfattr --only-values -n ceph.file.layout.object_size "$f") || return 1
	sc=$(getfattr --only-values -n ceph.file.layout.stripe_count "$f")
	su=$(getfattr --only-values -n ceph.file.layout.stripe_unit "$f")
	# objects: stripes of su bytes dealt over sc objects, object sets of sc x objsz bytes
	nobj=$(python3 - "$size" "$objsz" "$sc" "$su" <<'EOF'
import sys
size, osz, sc, su = map(int, sys.argv[1:])
per_set = osz * sc
sets = (size + per_set - 1) // per_set
objs = set()
for off in range(0, size, su):
    block = off // su
    objs.add((block // (sc * (osz // su))) * sc + block % sc)
print(max(objs) + 1 if objs else 0)
EOF
)
	for ((i = 0; i < nobj; i++)); do
		local o
		o=$(printf '%x.%08x' "$ino" "$i")
		echo "$o $(ceph_cli osd map cephfs_data "$o" -f json |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["acting_primary"])')"
	done
}

# up, down and watch never overlap for one lab (two ctest runs of one build tree, a person's
# make lab-down during a test).
# flock -o: the lock is held by flock itself, not by the daemons started under it.
case ${1:-} in
up | down)
	if [ -z "${FEEDBENCH_LAB_LOCKED:-}" ]; then
		FEEDBENCH_LAB_LOCKED=1 exec flock -o -w 300 "/tmp/feedbench-lab-$ID.lock" "$0" "$@"
	fi
	;;
esac
case ${1:-} in
up)
	[ "${2:-}" = --owner ] && up "${3:?--owner PID}" || up
	;;
watch) watch "$2" "$3" ;;
down) down ;;
status) status ;;
check)
	r=$(why_not)
	[ -z "$r" ] || {
		echo "$r"
		exit $SKIP
	}
	;;
env) cat "$LAB/env" ;;
shape) shape "$2" ;;
ceph)
	shift
	ceph_cli "$@"
	;;
exec)
	shift
	h=$1
	shift
	nsx "$h" "$@"
	;;
osd-of-file) osd_of_file "$2" ;;
s3)
	shift
	[ -f "$LAB/rgw/up" ] || die "radosgw is not up in this lab$( [ -f "$LAB/rgw/failed" ] && echo ": $(cat "$LAB/rgw/failed")")"
	s3 "$@"
	;;
rgw-admin)
	shift
	rgw_admin "$@"
	;;
rgw-gc)
	# deleted objects' data stays in the OSDs (memstore: in memory) until rgw's garbage
	# collection runs; tests run this after their deletes
	rgw_admin gc process --include-all
	;;
srun)
	shift
	[ -f "$LAB/slurm/up" ] || die "Slurm is not up in this lab (slurmctld/slurmd not installed?)"
	export FEEDBENCH_LAB_ID=$ID FEEDBENCH_LAB_DIR=$LAB CEPH_CONF=$CONF
	slurm_cli srun "$@"
	;;
sinfo | squeue | scontrol)
	slurm_cli "$@"
	;;
mpirun)
	shift
	# mpirun itself runs on a head node of its own, so that the daemons it starts on the
	# emulated hosts reach it over TCP inside the lab network.
	# CEPH_CONF: the ceph CLI feedbench runs (ceph osd map) finds the lab's cluster.
	export FEEDBENCH_LAB_ID=$ID FEEDBENCH_LAB_DIR=$LAB CEPH_CONF=$CONF
	exec ip netns exec "$NS-head" unshare --uts sh -c 'hostname labhead && exec "$@"' sh \
		mpirun --mca plm_rsh_agent "$HERE/agent.sh" --mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0 --mca btl self,vader,tcp \
		-x CEPH_CONF "$@"
	;;
*)
	echo "usage: $0 up|down|status|check|env|ceph ARGS|exec NS CMD|osd-of-file PATH|s3 /BUCKET[/KEY] CURL-ARGS|rgw-admin ARGS|rgw-gc" >&2
	exit 2
	;;
esac
