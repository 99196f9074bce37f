# shellcheck shell=bash
# redis-cli for the tests, on a Redis URL as the daemons take it
# (common/redis.c): unix://[user:password@]/path/to/sock[?db=N] or
# redis://[user:password@]host[:port][/db]. redis-cli 7's -u takes no
# unix:// URL, and would show the password in ps: here the URL becomes
# -s SOCKET (or -h HOST -p PORT), --user USER and -n DB, and the password
# goes in REDISCLI_AUTH, never on a command line. Exported, so that
# `bash -c "... redis_cli \"\$GAVEL_REDIS_URL\" ..."` finds it too (pass
# the variable's name in such strings, not its value).
#
#   redis_cli "$GAVEL_REDIS_URL" GET gavel:sched:lock

redis_cli() {
	local url=${1:?redis_cli URL [ARGUMENT...]} rest auth="" user="" pass="" db=""
	shift
	local -a where=()
	case "$url" in
	unix://*)
		rest=${url#unix://}
		if [[ $rest != /* ]]; then
			auth=${rest%%@/*}
			rest=/${rest#*@/}
		fi
		if [[ $rest == *'?db='* ]]; then
			db=${rest##*'?db='}
			rest=${rest%%'?'*}
		fi
		where=(-s "$rest")
		;;
	redis://*)
		rest=${url#redis://}
		if [[ $rest == *@* ]]; then
			auth=${rest%@*}
			rest=${rest##*@}
		fi
		if [[ $rest == */* ]]; then
			db=${rest#*/}
			rest=${rest%%/*}
		fi
		if [[ $rest == *:* ]]; then
			where=(-h "${rest%:*}" -p "${rest##*:}")
		else
			where=(-h "$rest")
		fi
		;;
	*)
		echo "redis_cli: not a redis:// or unix:// URL" >&2
		return 2
		;;
	esac
	if [ -n "$auth" ]; then
		if [[ $auth == *:* ]]; then
			user=${auth%%:*}
			pass=${auth#*:}
		else
			pass=$auth
		fi
		# Percent-decoding, as common/redis.c does.
		user=$(printf '%b' "${user//%/\\x}")
		pass=$(printf '%b' "${pass//%/\\x}")
	fi
	[ -n "$user" ] && where+=(--user "$user")
	[ -n "$db" ] && where+=(-n "$db")
	if [ -n "$pass" ]; then
		REDISCLI_AUTH=$pass redis-cli "${where[@]}" "$@"
	else
		env -u REDISCLI_AUTH redis-cli "${where[@]}" "$@"
	fi
}
export -f redis_cli
