/* net — no network at all: connects to a TCP listener the driver runs on
 * the host (loopback and the host's own address), to the cloud metadata
 * address and to a public resolver must fail at once (ENETUNREACH and the
 * like; a connect that hangs means a route exists), only a loopback
 * interface carries an address, and no host Unix socket (PostgreSQL, Redis,
 * container runtimes, the driver's abstract socket) is reachable.
 * stdin: "PORT <n>", "HOSTIP <addr>"..., "ABSTRACT <name>" lines.
 * No packet leaves even on failure of the sandbox: only connect() is tried. */
#include "probe.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

static void tcp(const char *host, int port)
{
	char name[128];
	snprintf(name, sizeof name, "tcp connect %s port %d", host, port);
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	socklen_t len;
	int fam;
	if (strchr(host, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, host, &a->sin6_addr);
		len = sizeof *a;
		fam = AF_INET6;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, host, &a->sin_addr);
		len = sizeof *a;
		fam = AF_INET;
	}
	int fd = socket(fam, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		blocked("%s: socket errno=%d (%s)", name, errno, strerror(errno));
		return;
	}
	if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
		escaped("%s: connected", name);
		close(fd);
		return;
	}
	if (errno != EINPROGRESS) {
		blocked("%s errno=%d (%s)", name, errno, strerror(errno));
		close(fd);
		return;
	}
	struct pollfd p = { fd, POLLOUT, 0 };
	int r = poll(&p, 1, 1000);
	if (r == 0) {
		escaped("%s: still pending after 1 s: a route exists", name);
	} else {
		int err = 0;
		socklen_t el = sizeof err;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err == 0)
			escaped("%s: connected", name);
		else
			blocked("%s errno=%d (%s)", name, err, strerror(err));
	}
	close(fd);
}

/* connect() on UDP sends nothing; it only needs a route. */
static void udp_route(const char *host, int port)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		blocked("udp socket errno=%d (%s)", errno, strerror(errno));
		return;
	}
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, host, &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
		escaped("udp route to %s:%d exists", host, port);
	else
		blocked("udp route to %s:%d errno=%d (%s)", host, port, errno, strerror(errno));
	close(fd);
}

static void unix_sock(const char *path, int abstract)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	size_t n = strlen(path);
	if (n > sizeof a.sun_path - 2)
		n = sizeof a.sun_path - 2;
	memcpy(a.sun_path + (abstract ? 1 : 0), path, n);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		blocked("unix socket errno=%d (%s)", errno, strerror(errno));
		return;
	}
	if (connect(fd, (struct sockaddr *)&a, len) == 0)
		escaped("connected to unix socket %s%s", abstract ? "@" : "", path);
	else
		blocked("unix connect %s%s errno=%d (%s)", abstract ? "@" : "", path, errno, strerror(errno));
	close(fd);
}

int main(void)
{
	char params[4096], v[256];
	read_stdin(params, sizeof params);
	int port = param(params, "PORT", v, sizeof v) == 0 ? atoi(v) : 0;
	if (!port)
		info("no PORT given: skipping the host listener");

	struct ifaddrs *ifs;
	if (getifaddrs(&ifs) == 0) {
		for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
				continue;
			char addr[INET6_ADDRSTRLEN] = "";
			void *src = i->ifa_addr->sa_family == AF_INET ? (void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
								       : (void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
			inet_ntop(i->ifa_addr->sa_family, src, addr, sizeof addr);
			if (i->ifa_flags & IFF_LOOPBACK)
				info("interface %s %s (loopback)", i->ifa_name, addr);
			else
				escaped("interface %s has address %s", i->ifa_name, addr);
		}
		freeifaddrs(ifs);
	} else {
		blocked("getifaddrs errno=%d (%s)", errno, strerror(errno));
	}

	if (port) {
		tcp("127.0.0.1", port);
		tcp("::1", port);
		/* HOSTIP lines: the host's own addresses. */
		for (const char *p = params; (p = strstr(p, "HOSTIP ")); p += 7) {
			char ip[64];
			size_t n = strcspn(p + 7, "\n");
			if (n >= sizeof ip)
				continue;
			memcpy(ip, p + 7, n);
			ip[n] = 0;
			tcp(ip, port);
		}
	}
	tcp("169.254.169.254", 80);
	tcp("8.8.8.8", 53);
	tcp("10.0.0.1", 80);
	tcp("2001:4860:4860::8888", 53);
	udp_route("8.8.8.8", 53);
	udp_route("169.254.169.254", 53);

	static const char *sockets[] = {
		"/var/run/postgresql/.s.PGSQL.5432", "/run/postgresql/.s.PGSQL.5432", "/tmp/.s.PGSQL.5432",
		"/var/run/redis/redis-server.sock", "/run/redis/redis.sock", "/tmp/redis.sock",
		"/var/run/docker.sock", "/run/containerd/containerd.sock", "/run/systemd/private",
		"/run/dbus/system_bus_socket", "/dev/log",
	};
	for (size_t i = 0; i < sizeof sockets / sizeof sockets[0]; i++)
		unix_sock(sockets[i], 0);
	if (param(params, "ABSTRACT", v, sizeof v) == 0)
		unix_sock(v, 1);
	return finish();
}
