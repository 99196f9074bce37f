# shellcheck shell=bash
# A PostgreSQL primary with one synchronous streaming standby, both
# project-local, for the failover tests. The primary is the cluster that
# tests/lib/services.sh (deploy/local/gavel-local) started in SVCDIR; the
# standby is a pg_basebackup of it in a folder of its own, on its own port,
# run by the same service user with the same pg_ctl. Everything runs as
# gavel-local runs it: as the service user (GAVEL_USER, default gavel) when
# we are root, the superuser reachable only by peer authentication on the
# unix socket, TCP on 127.0.0.1 with passwords.
#
#   . tests/lib/services.sh; . tests/lib/pg_standby.sh
#   services_start "$d/services" && . "$d/services/env"   # primary + Redis
#   (migrations)
#   pgs_init "$d/services"
#   pgs_primary_prepare               # replication role, pg_hba, settings
#   pgs_standby_start "$d/standby"    # basebackup, start, wait streaming
#   pgs_make_sync                     # synchronous_standby_names = '*'
#   url=$(pgs_multihost_url "$GAVEL_DATABASE_URL")
#   ...
#   pgs_kill_primary                  # kill -9 of the whole process tree
#   pgs_promote                       # pg_ctl promote of the standby
#   ...
#   pgs_standby_stop                  # on exit; services_stop the primary
#
# Sets PGS_BIN (PostgreSQL's bin folder), PGS_USER (service user), PGS_P1
# and PGS_P2 (ports of primary and standby), PGS_PRIMARY_DATA,
# PGS_PRIMARY_RUN, PGS_STANDBY_DIR, PGS_STANDBY_DATA, PGS_STANDBY_RUN,
# PGS_APP (the standby's application_name). Each function returns non-zero
# with the reason on stderr when it fails.

PGS_APP=gavel_standby
PGS_REPL_ROLE=gavel_replicator

_pgs_as_svc() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$PGS_USER" -- "$@"
	else
		"$@"
	fi
}

# pgs_psql PORT RUNDIR [PSQL ARG...]: psql as the cluster's superuser (the
# service user) over the unix socket, database postgres, unaligned output.
pgs_psql() {
	local port=$1 run=$2
	shift 2
	_pgs_as_svc "$PGS_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$run" -p "$port" -d postgres "$@"
}
pgs_primary_sql() { pgs_psql "$PGS_P1" "$PGS_PRIMARY_RUN" -c "$1"; }
pgs_standby_sql() { pgs_psql "$PGS_P2" "$PGS_STANDBY_RUN" -c "$1"; }

# True when pid $1 exists and is not a zombie (PID 1 here may be slow to
# reap orphans, like the postmaster after kill -9).
_pgs_alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st:0:1}" != Z ] && [ "${st:0:1}" != X ]
}

# Pids of every live process whose working directory is DIR or below it:
# a postmaster and all its children run in their data folder.
_pgs_pids_in() {
	local dir p
	dir=$(readlink -f "$1" 2>/dev/null) || return 0
	[ -n "$dir" ] && [ "$dir" != / ] || return 0
	# One find, not a readlink per process: a host running sandboxes has
	# thousands, and a fork each took a minute on two busy cores.
	find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$dir" -o -lname "$dir/*" \) 2>/dev/null |
		while IFS=/ read -r _ _ p _; do
			_pgs_alive "$p" && echo "$p"
		done
}

# pgs_init SVCDIR: the primary that services_start started in SVCDIR.
pgs_init() {
	local svc=${1:?pgs_init SVCDIR} d v best=-1
	PGS_USER=${GAVEL_USER:-gavel}
	PGS_PRIMARY_DATA=$svc/pg
	PGS_PRIMARY_RUN=$svc/run
	PGS_P1=$(sed -n 's/^pg=//p' "$svc/ports" 2>/dev/null)
	[ -n "$PGS_P1" ] || { echo "pgs_init: no port in $svc/ports" >&2; return 1; }
	PGS_BIN=
	for d in /usr/lib/postgresql/*/bin; do
		v=${d#/usr/lib/postgresql/}
		v=${v%/bin}
		[[ $v =~ ^[0-9]+$ ]] && [ -x "$d/pg_basebackup" ] && [ "$v" -gt "$best" ] && best=$v && PGS_BIN=$d
	done
	[ -n "$PGS_BIN" ] || { echo "pgs_init: no PostgreSQL under /usr/lib/postgresql" >&2; return 1; }
	[ -f "$PGS_PRIMARY_DATA/postmaster.pid" ] || { echo "pgs_init: no running cluster in $PGS_PRIMARY_DATA" >&2; return 1; }
}

# pgs_primary_prepare: a replication role with a random password, a
# pg_hba line that lets it (and only it) stream from 127.0.0.1, and the
# settings a primary with a standby needs; reloads (or restarts, when
# wal_level must change).
pgs_primary_prepare() {
	PGS_REPL_PASSWORD=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
	pgs_psql "$PGS_P1" "$PGS_PRIMARY_RUN" -v pw="$PGS_REPL_PASSWORD" <<-EOF || return 1
		SELECT 'CREATE ROLE $PGS_REPL_ROLE LOGIN REPLICATION'
		 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PGS_REPL_ROLE') \gexec
		ALTER ROLE $PGS_REPL_ROLE LOGIN REPLICATION PASSWORD :'pw';
		-- wal_level = replica, max_wal_senders, max_replication_slots
		-- and hot_standby keep their defaults (replica, 10, 10, on): a
		-- standby may not have fewer senders, slots or connections than
		-- its primary, and those take a restart.
		ALTER SYSTEM SET wal_level = 'replica';
		-- Overrides the test clusters' synchronous_commit = off of
		-- gavel-runtime.conf (GAVEL_PG_FAST): postgresql.auto.conf is
		-- read last. See pgs_make_sync for why it must be on.
		ALTER SYSTEM SET synchronous_commit = 'on';
		-- A standby that lost its connection for a moment can catch up
		-- from the slot; this only bounds what a dead one would keep.
		ALTER SYSTEM SET max_slot_wal_keep_size = '1GB';
	EOF
	grep -q "^host *replication *$PGS_REPL_ROLE " "$PGS_PRIMARY_DATA/pg_hba.conf" ||
		printf 'host    replication  %s  127.0.0.1/32   scram-sha-256\n' "$PGS_REPL_ROLE" |
		_pgs_as_svc tee -a "$PGS_PRIMARY_DATA/pg_hba.conf" >/dev/null || return 1
	# wal_level takes a restart; the default (replica) needs none.
	if [ "$(pgs_primary_sql 'SHOW wal_level')" = minimal ]; then
		_pgs_as_svc "$PGS_BIN/pg_ctl" -D "$PGS_PRIMARY_DATA" -w -t 30 -s -m fast restart \
			-l "$PGS_PRIMARY_DATA/../log/postgres.log" >/dev/null || return 1
	else
		pgs_primary_sql 'SELECT pg_reload_conf()' >/dev/null || return 1
	fi
	[ "$(pgs_primary_sql 'SHOW wal_level')" = replica ] ||
		{ echo "pgs_primary_prepare: wal_level is not replica" >&2; return 1; }
}

# pgs_standby_start DIR: pg_basebackup -R of the primary into DIR/data
# (a physical slot keeps the WAL the standby has not received), its own
# port and socket folder DIR/run, started with pg_ctl as the service user;
# waits until the primary's pg_stat_replication shows it streaming.
pgs_standby_start() {
	PGS_STANDBY_DIR=${1:?pgs_standby_start DIR}
	PGS_STANDBY_DATA=$PGS_STANDBY_DIR/data
	PGS_STANDBY_RUN=$PGS_STANDBY_DIR/run
	mkdir -p "$PGS_STANDBY_DIR" "$PGS_STANDBY_RUN" || return 1
	[ "$(id -u)" -eq 0 ] && chown "$PGS_USER:" "$PGS_STANDBY_DIR" "$PGS_STANDBY_RUN"
	chmod 0750 "$PGS_STANDBY_RUN"
	[ ${#PGS_STANDBY_RUN} -le 80 ] || { echo "pgs_standby_start: $PGS_STANDBY_RUN is too long for a socket path" >&2; return 1; }
	# shellcheck disable=SC2119
	PGS_P2=$(_services_free_port "$PGS_P1") || { echo "pgs_standby_start: no free port" >&2; return 1; }
	# The password goes in the environment, never on a command line; -R
	# writes it into the standby's primary_conninfo (postgresql.auto.conf,
	# mode 0600 in a 0700 folder).
	if ! _pgs_as_svc env PGPASSWORD="$PGS_REPL_PASSWORD" "$PGS_BIN/pg_basebackup" \
		-d "host=127.0.0.1 port=$PGS_P1 user=$PGS_REPL_ROLE application_name=$PGS_APP" \
		-D "$PGS_STANDBY_DATA" -R -X stream -c fast -C -S "$PGS_APP" --no-sync \
		>"$PGS_STANDBY_DIR/basebackup.log" 2>&1; then
		cat "$PGS_STANDBY_DIR/basebackup.log" >&2
		return 1
	fi
	# The copy's gavel-runtime.conf names the primary's port and socket
	# folder: the standby's own instead.
	sed -e "s/^port = .*/port = $PGS_P2/" \
		-e "s|^unix_socket_directories = .*|unix_socket_directories = '$PGS_STANDBY_RUN'|" \
		"$PGS_PRIMARY_DATA/gavel-runtime.conf" | _pgs_as_svc tee "$PGS_STANDBY_DATA/gavel-runtime.conf" >/dev/null
	grep -q "^port = $PGS_P2\$" "$PGS_STANDBY_DATA/gavel-runtime.conf" ||
		{ echo "pgs_standby_start: could not set the standby's port" >&2; return 1; }
	# The primary's synchronous_standby_names is set only after this copy
	# (pgs_make_sync): a promoted standby that waited for a standby of its
	# own, which it does not have, would never acknowledge a commit.
	if grep -q synchronous_standby_names "$PGS_STANDBY_DATA/postgresql.auto.conf"; then
		echo "pgs_standby_start: the standby's copy names synchronous standbys" >&2
		return 1
	fi
	rm -f "$PGS_STANDBY_DATA/postmaster.pid"
	if ! _pgs_as_svc "$PGS_BIN/pg_ctl" -D "$PGS_STANDBY_DATA" -l "$PGS_STANDBY_DIR/postgres.log" \
		-w -t 60 -s start >/dev/null 2>&1; then
		tail -n 15 "$PGS_STANDBY_DIR/postgres.log" >&2
		return 1
	fi
	_pgs_wait_replication state streaming pgs_standby_start
}

# _pgs_wait_replication COLUMN VALUE CALLER: waits up to 30 s until the
# standby's row of pg_stat_replication on the primary has COLUMN = VALUE.
_pgs_wait_replication() {
	local column=$1 want=$2 i st
	for ((i = 0; i < 300; i++)); do
		st=$(pgs_primary_sql "SELECT $column FROM pg_stat_replication WHERE application_name = '$PGS_APP'")
		[ "$st" = "$want" ] && return 0
		sleep 0.1
	done
	echo "$3: the standby's $column is '$st' after 30 s, not $want" >&2
	return 1
}

# pgs_make_sync: from now on the primary acknowledges a commit only once
# the standby has flushed its WAL.
#
# This is what makes "no result lost" true when the primary dies and the
# standby is promoted. With asynchronous streaming, a commit that the
# primary had acknowledged to a daemon (a submission the frontend answered
# 201 for, a result the executor considers written and whose Redis token it
# has already dropped) could still be missing from the standby's WAL when
# the primary dies; the promoted standby would then not know that
# submission, or would show the job as queued/running with no token left to
# run it again. With synchronous_standby_names = '*' and
# synchronous_commit = on, COMMIT returns to the client only after the
# standby has the commit record on disk (remote flush), so every commit a
# client saw succeed is on the new primary. What was committed on the old
# primary but not yet acknowledged (the connection died while COMMIT
# waited) may or may not be there; the client saw an error and must treat
# it as unknown (the frontend answers 5xx, the executor retries or the job
# is run again and written once).
#
# The other side of it: with the standby gone, every commit on the primary
# waits. The promoted standby runs alone, without synchronous standbys.
# (The test clusters run with fsync = off: they kill processes, not the
# machine, so what the kernel holds counts as flushed; a production pair
# keeps fsync on.)
pgs_make_sync() {
	pgs_psql "$PGS_P1" "$PGS_PRIMARY_RUN" >/dev/null <<-EOF || return 1
		ALTER SYSTEM SET synchronous_standby_names = '*';
		ALTER SYSTEM SET synchronous_commit = 'on';
		SELECT pg_reload_conf();
	EOF
	_pgs_wait_replication sync_state sync pgs_make_sync
}

# pgs_multihost_url URL: URL (postgresql://user:pw@127.0.0.1:P1/db[?...])
# with both hosts, primary first, and target_session_attrs=read-write:
# libpq tries each host in turn and keeps the first that accepts writes.
pgs_multihost_url() {
	local url=$1 out
	out=${url/@127.0.0.1:$PGS_P1\//@127.0.0.1:$PGS_P1,127.0.0.1:$PGS_P2/}
	[ "$out" != "$url" ] || { echo "pgs_multihost_url: no host 127.0.0.1:$PGS_P1 in the URL" >&2; return 1; }
	case "$out" in *'?'*) out="$out&target_session_attrs=read-write" ;; *) out="$out?target_session_attrs=read-write" ;; esac
	printf '%s\n' "$out"
}

# pgs_host_url URL PORT: URL with its one host replaced by 127.0.0.1:PORT.
pgs_host_url() {
	local url=$1 port=$2
	printf '%s\n' "${url/@127.0.0.1:$PGS_P1\//@127.0.0.1:$port/}"
}

# pgs_kill_primary: what a crashed machine looks like to everyone else:
# the postmaster and every backend, walsender and helper stop at once
# (SIGSTOP first, so that none of them notices another's death and sends
# anything more), then SIGKILL. Sets PGS_KILLED_AT (date +%s.%N) to the
# moment the SIGKILL was sent; waits until all are gone.
pgs_kill_primary() {
	local pids=() p i pm alive=1
	pm=$(head -n1 "$PGS_PRIMARY_DATA/postmaster.pid" 2>/dev/null | tr -dc 0-9)
	[ -n "$pm" ] && _pgs_alive "$pm" || { echo "pgs_kill_primary: no live postmaster" >&2; return 1; }
	# Every server process is a child of the postmaster.
	pids=("$pm")
	while read -r p; do pids+=("$p"); done < <(pgrep -P "$pm")
	kill -STOP "${pids[@]}" 2>/dev/null
	kill -KILL "${pids[@]}" 2>/dev/null
	PGS_KILLED_AT=$(date +%s.%N)
	for ((i = 0; i < 100; i++)); do
		alive=0
		for p in "${pids[@]}"; do _pgs_alive "$p" && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.05
	done
	[ "$alive" -eq 0 ] || { echo "pgs_kill_primary: processes of the primary still alive" >&2; return 1; }
	# Nothing of it left anywhere (a process it forked that left the
	# postmaster's children would show up here).
	p=$(_pgs_pids_in "$PGS_PRIMARY_DATA")
	[ -z "$p" ] || { echo "pgs_kill_primary: still running in the data folder: $p" >&2; return 1; }
}

# pgs_promote: promotes the standby and waits until it accepts writes.
pgs_promote() {
	_pgs_as_svc "$PGS_BIN/pg_ctl" -D "$PGS_STANDBY_DATA" -w -t 60 -s promote >/dev/null || return 1
	[ "$(pgs_standby_sql 'SELECT pg_is_in_recovery()')" = f ]
}

# pgs_standby_stop: stops the standby (promoted or not) at once and kills
# whatever is left of it. The primary is services_stop's.
pgs_standby_stop() {
	[ -n "${PGS_STANDBY_DATA:-}" ] && [ -d "$PGS_STANDBY_DATA" ] || return 0
	if [ -f "$PGS_STANDBY_DATA/postmaster.pid" ]; then
		_pgs_as_svc "$PGS_BIN/pg_ctl" -D "$PGS_STANDBY_DATA" -m immediate -w -t 20 -s stop >/dev/null 2>&1
	fi
	local pids
	pids=$(_pgs_pids_in "$PGS_STANDBY_DATA")
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
	return 0
}
