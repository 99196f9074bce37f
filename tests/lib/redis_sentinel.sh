# shellcheck shell=bash
# A Redis master, one replica and three Sentinels for the failover tests,
# all on TCP at one address of the test's choosing, with the production
# ACL users of deploy/redis/gavel-users.acl.example (the passwords of the
# harness's users: those in GAVEL_REDIS_URL and GAVEL_REDIS_URL_<DAEMON>)
# and the two that deploy/redis/README.md adds behind Sentinel, with
# passwords made here: gavel-replica (a replica's link to its master) and
# gavel-sentinel (what the Sentinels run on the servers).
# Needs redis-server and redis-sentinel (Debian's packages), TMP and
# bail() from the test, and tests/lib/services.sh's _services_free_port.
#
#   sentinel_start DIR ADDR     starts them; sets RS_MASTER_PORT,
#                               RS_REPLICA_PORT, RS_SENTINEL_PORTS (array),
#                               RS_PID_MASTER, RS_PID_REPLICA, RS_PIDS
#   sentinel_url URL            prints the redis-sentinel:// URL with URL's
#                               user and password, and the Sentinels' own
#                               password (they have requirepass)
#   sentinel_master             prints "host port" of the master the
#                               Sentinels name now
#   sentinel_stop               stops everything started

RS_NAME=gavel
RS_PIDS=()

# user:password of a redis:// or unix:// URL.
_rs_userinfo() {
	local rest=${1#*://}
	case "$rest" in *@*) printf '%s\n' "${rest%@*}" ;; *) printf '\n' ;; esac
}

# The ACL file: the shipped rules, each hash placeholder replaced by the
# SHA-256 of that user's password in the harness's URLs.
_rs_acl() {
	local line user var url pw
	while IFS= read -r line; do
		case "$line" in
		"user default"*) printf '%s\n' "$line"; continue ;;
		esac
		user=$(cut -d' ' -f2 <<<"$line")
		case "$user" in
		gavel-admin) var=GAVEL_REDIS_URL ;;
		gavel-frontend) var=GAVEL_REDIS_URL_FRONTEND ;;
		gavel-scheduler) var=GAVEL_REDIS_URL_SCHEDULER ;;
		gavel-executor) var=GAVEL_REDIS_URL_EXECUTOR ;;
		*) continue ;;
		esac
		url=${!var}
		pw=$(_rs_userinfo "$url")
		pw=${pw#*:}
		[ -n "$pw" ] || bail "no password for $user in \$$var"
		sed -E "s/ #SHA256_OF_[A-Z_]+ / #$(printf '%s' "$pw" | sha256sum | cut -d' ' -f1) /" <<<"$line"
	done <"$ROOT/deploy/redis/gavel-users.acl.example"
	# The rules deploy/redis/README.md gives for these two.
	printf 'user gavel-replica on #%s resetkeys resetchannels -@all +psync +replconf +ping\n' \
		"$(printf '%s' "$RS_REPLICA_PASS" | sha256sum | cut -d' ' -f1)"
	printf 'user gavel-sentinel on #%s resetkeys allchannels -@all +multi +slaveof +ping +exec +subscribe' \
		"$(printf '%s' "$RS_SENTINEL_PASS" | sha256sum | cut -d' ' -f1)"
	printf ' +config|rewrite +role +publish +info +client|setname +client|kill +script|kill\n'
}

_rs_wait_port() { # port
	local _
	for _ in $(seq 100); do
		redis-cli -h "$RS_ADDR" -p "$1" --no-auth-warning PING 2>/dev/null | grep -q -e PONG -e NOAUTH && return 0
		sleep 0.1
	done
	return 1
}

# The configuration of NAME (master, replica, sentinel0..2) on PORT.
_rs_conf() { # name port
	local name=$1 port=$2
	echo "bind $RS_ADDR"
	echo "port $port"
	case "$name" in
	master | replica)
		# Both servers alike: either may be the replica after a
		# failover (Sentinel rewrites replicaof), and a replica must
		# authenticate to its master. No persistence: the data are work
		# in flight, rebuilt from PostgreSQL.
		mkdir -p "$RS_DIR/$name"
		echo "protected-mode yes"
		echo "dir $RS_DIR/$name"
		echo "aclfile $RS_DIR/users.acl"
		echo 'save ""'
		echo "appendonly no"
		echo "masteruser gavel-replica"
		echo "masterauth $RS_REPLICA_PASS"
		echo "logfile $RS_DIR/$name.log"
		[ "$name" = replica ] && echo "replicaof $RS_ADDR $RS_MASTER_PORT"
		;;
	sentinel*)
		# Quorum 2 of 3, a master silent for 1 s is down.
		echo "dir $RS_DIR"
		echo "logfile $RS_DIR/$name.log"
		echo "requirepass $RS_SENTINEL_CLIENT_PASS"
		echo "sentinel sentinel-pass $RS_SENTINEL_CLIENT_PASS"
		echo "sentinel monitor $RS_NAME $RS_ADDR $RS_MASTER_PORT 2"
		echo "sentinel auth-user $RS_NAME gavel-sentinel"
		echo "sentinel auth-pass $RS_NAME $RS_SENTINEL_PASS"
		echo "sentinel down-after-milliseconds $RS_NAME 1000"
		echo "sentinel failover-timeout $RS_NAME 10000"
		echo "sentinel parallel-syncs $RS_NAME 1"
		;;
	esac
}

# _rs_launch PROGRAM NAME: starts NAME on a free port; sets _RS_PORT and
# _RS_PID. A port can be taken between the check and the bind (by any
# connection's local port too): a few fresh ports are tried.
_rs_launch() {
	local prog=$1 name=$2 try
	for try in 1 2 3; do
		_RS_PORT=$(_services_free_port "${_RS_TAKEN[@]}") || bail "no free port"
		_rs_conf "$name" "$_RS_PORT" >"$RS_DIR/$name.conf"
		chmod 0600 "$RS_DIR/$name.conf"
		: >"$RS_DIR/$name.log"
		setsid "$prog" "$RS_DIR/$name.conf" </dev/null >/dev/null 2>&1 &
		_RS_PID=$!
		RS_PIDS+=("$_RS_PID")
		_rs_wait_port "$_RS_PORT" && { _RS_TAKEN+=("$_RS_PORT"); return 0; }
		kill -KILL "$_RS_PID" 2>/dev/null
		grep -q 'already in use' "$RS_DIR/$name.log" || break
	done
	bail "$prog ($name) did not start: $(tail -n5 "$RS_DIR/$name.log")"
}

sentinel_start() {
	local dir=${1:?sentinel_start DIR ADDR} addr=${2:?sentinel_start DIR ADDR}
	RS_DIR=$dir
	RS_ADDR=$addr
	mkdir -p "$dir"
	local admin
	admin=$(_rs_userinfo "$GAVEL_REDIS_URL")
	RS_ADMIN_USER=${admin%%:*}
	RS_ADMIN_PASS=${admin#*:}
	RS_REPLICA_PASS=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
	RS_SENTINEL_PASS=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
	# What the Sentinels ask of their own clients (requirepass), the
	# daemons among them (sentinel_password in their URLs).
	RS_SENTINEL_CLIENT_PASS=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
	_rs_acl >"$dir/users.acl" || return 1
	RS_SENTINEL_PORTS=()
	_RS_TAKEN=()
	_rs_launch redis-server master
	RS_MASTER_PORT=$_RS_PORT
	RS_PID_MASTER=$_RS_PID
	_rs_launch redis-server replica
	RS_REPLICA_PORT=$_RS_PORT
	RS_PID_REPLICA=$_RS_PID
	local i p
	for i in 0 1 2; do
		_rs_launch redis-sentinel "sentinel$i"
		RS_SENTINEL_PORTS+=("$_RS_PORT")
	done
	# Replica in sync, and every Sentinel knows the replica and the others.
	for _ in $(seq 150); do
		local synced known=0
		synced=$(REDISCLI_AUTH=$RS_ADMIN_PASS redis-cli -h "$addr" -p "$RS_REPLICA_PORT" --user "$RS_ADMIN_USER" \
			--no-auth-warning INFO replication 2>/dev/null | tr -d '\r' | sed -n 's/^master_link_status://p')
		for p in "${RS_SENTINEL_PORTS[@]}"; do
			REDISCLI_AUTH=$RS_SENTINEL_CLIENT_PASS redis-cli -h "$addr" -p "$p" --no-auth-warning \
				SENTINEL master "$RS_NAME" 2>/dev/null | tr -d '\r' |
				awk 'prev=="num-slaves"{s=$0} prev=="num-other-sentinels"{o=$0} {prev=$0} END{exit !(s>=1 && o>=2)}' &&
				known=$((known + 1))
		done
		[ "$synced" = up ] && [ $known -eq 3 ] && return 0
		sleep 0.2
	done
	bail "the replica or the Sentinels did not come up: $(tail -n3 "$dir"/*.log | tr '\n' ' ')"
}

sentinel_url() { # URL
	local ui hosts="" p
	ui=$(_rs_userinfo "$1")
	for p in "${RS_SENTINEL_PORTS[@]}"; do hosts+="${hosts:+,}$RS_ADDR:$p"; done
	printf 'redis-sentinel://%s%s/%s?sentinel_password=%s\n' "${ui:+$ui@}" "$hosts" "$RS_NAME" \
		"$RS_SENTINEL_CLIENT_PASS"
}

sentinel_master() {
	local p
	for p in "${RS_SENTINEL_PORTS[@]}"; do
		REDISCLI_AUTH=$RS_SENTINEL_CLIENT_PASS redis-cli -h "$RS_ADDR" -p "$p" --no-auth-warning \
			SENTINEL get-master-addr-by-name "$RS_NAME" 2>/dev/null | tr -d '\r' |
			paste -sd' ' && return 0
	done
	return 1
}

sentinel_stop() {
	local p
	for p in "${RS_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for _ in $(seq 50); do
		local alive=0
		for p in "${RS_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.1
	done
	for p in "${RS_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	RS_PIDS=()
}
