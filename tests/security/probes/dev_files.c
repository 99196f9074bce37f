/* dev_files — no host device is reachable: physical memory and ports,
 * the kernel log, disks, terminals, KVM, FUSE, TUN, vsock, GPUs (none were
 * granted), firmware tables. Lists /dev for the log. Opens are never
 * followed by a read or write of the device. */
#include "probe.h"

#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/klog.h>

static void try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	const char *how = (flags & O_ACCMODE) == O_RDONLY ? "reading" : (flags & O_ACCMODE) == O_WRONLY ? "writing" : "read-write";
	if (fd >= 0) {
		close(fd);
		escaped("opened %s for %s", path, how);
	} else {
		blocked("open %s for %s errno=%d (%s)", path, how, errno, strerror(errno));
	}
}

static void try_list(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		blocked("opendir %s errno=%d (%s)", path, errno, strerror(errno));
		return;
	}
	int n = 0;
	char first[128] = "";
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!n)
			snprintf(first, sizeof first, "%.100s", de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		escaped("%s lists %d entries (first: %s)", path, n, first);
	else
		blocked("%s is empty", path);
}

static long a_syslog(long a)
{
	(void)a;
	char buf[256];
	return klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof buf);
}

int main(void)
{
	char params[256];
	probe_params(params, sizeof params);
	DIR *d = opendir("/dev");
	if (d) {
		char line[4096];
		size_t o = 0;
		struct dirent *de;
		while ((de = readdir(d)) && o + 300 < sizeof line)
			o += (size_t)snprintf(line + o, sizeof line - o, " %s", de->d_name);
		closedir(d);
		info("ls /dev:%s", line);
	}
	static const char *ro[] = {
		"/dev/mem", "/dev/kmem", "/dev/port", "/dev/kmsg", "/dev/sda", "/dev/vda", "/dev/xvda",
		"/dev/nvme0n1", "/dev/nvme0", "/dev/loop0", "/dev/hpet", "/dev/rtc0", "/dev/cpu/0/msr",
		"/dev/snapshot", "/dev/mapper/control", "/dev/nvidia0", "/dev/nvidiactl", "/dev/dri/card0",
		"/dev/sg0", "/dev/watchdog", "/dev/input/event0",
	};
	for (size_t i = 0; i < sizeof ro / sizeof ro[0]; i++)
		try_open(ro[i], O_RDONLY);
	static const char *rw[] = {
		"/dev/kmsg", "/dev/tty", "/dev/console", "/dev/tty0", "/dev/tty1", "/dev/ttyS0", "/dev/kvm",
		"/dev/vsock", "/dev/vhost-net", "/dev/vhost-vsock",
		"/dev/loop-control", "/dev/autofs", "/dev/btrfs-control", "/dev/uinput",
	};
	for (size_t i = 0; i < sizeof rw / sizeof rw[0]; i++)
		try_open(rw[i], O_RDWR);
	/* gVisor's own emulated devices (not the host's): opening them is
	 * allowed; what they could do needs mount / CAP_NET_ADMIN. */
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	info("/dev/fuse (gVisor's): %s", fd >= 0 ? "opens; mounting it needs mount(2), see sys_mount" : strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		struct ifreq ifr;
		memset(&ifr, 0, sizeof ifr);
		ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
		snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "gvprobe0");
		if (ioctl(fd, TUNSETIFF, &ifr) == 0)
			escaped("created a network interface through /dev/net/tun");
		else
			blocked("TUNSETIFF errno=%d (%s)", errno, strerror(errno));
		close(fd);
	} else {
		blocked("open /dev/net/tun errno=%d (%s)", errno, strerror(errno));
	}
	try_list("/sys/firmware");
	try_list("/sys/firmware/acpi/tables");
	try_list("/sys/firmware/efi");
	try_list("/sys/kernel/debug");
	try_list("/sys/kernel/security");
	try_list("/sys/block");
	try_list("/sys/bus/pci/devices");
	try_open("/sys/firmware/dmi/tables/DMI", O_RDONLY);
	try_open("/sys/class/dmi/id/product_uuid", O_RDONLY);
	attempt("syslog(SYSLOG_ACTION_READ_ALL)", a_syslog, 0);
	return finish();
}
