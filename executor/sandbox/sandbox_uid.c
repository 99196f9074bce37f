/* Host uids of sandboxes; see sandbox_uid.h. */
#include "executor/sandbox/sandbox_uid.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executor/sandbox/lockdir.h"

int exec_uids_init(struct exec_uids *u, const char *dir, uint32_t base, unsigned count,
		   struct gv_err *err)
{
	memset(u, 0, sizeof(*u));
	u->dir_fd = -1;
	for (size_t i = 0; i < EXEC_UIDS_MAX; i++)
		u->lock_fd[i] = u->userns_fd[i] = -1;
	if (count == 0 || count > EXEC_UIDS_MAX)
		return gv_err_set(err, GV_ECONFIG, "sandbox_uid_count must be 1..%d", EXEC_UIDS_MAX);
	uint64_t end = (uint64_t)base + count; /* one past the last */
	if (base == 0 || end > (1ull << 31))
		return gv_err_set(err, GV_ECONFIG, "sandbox uids %u..%llu: must lie within 1..2^31-1", base,
				  (unsigned long long)(end - 1));
	if (base <= 65534 && end > 65534)
		return gv_err_set(err, GV_ECONFIG, "sandbox uids %u..%llu hold 65534 (nobody)", base,
				  (unsigned long long)(end - 1));
	u->base = base;
	u->count = count;
	/* Spread the processes of a node over the range. */
	u->next = (unsigned)getpid() % count;
	if (!dir)
		dir = EXEC_UIDS_DIR;
	u->dir_fd = exec_lockdir_open(dir, "sandbox uids", err);
	if (u->dir_fd < 0)
		return -1;
	return 0;
}

void exec_uids_fini(struct exec_uids *u)
{
	for (unsigned i = 0; i < u->count; i++) {
		if (u->userns_fd[i] >= 0)
			close(u->userns_fd[i]);
		if (u->lock_fd[i] >= 0)
			close(u->lock_fd[i]);
		u->userns_fd[i] = u->lock_fd[i] = -1;
	}
	if (u->dir_fd >= 0)
		close(u->dir_fd);
	u->dir_fd = -1;
}

static int write_map(pid_t pid, const char *file, uint32_t id, struct gv_err *err)
{
	char path[64], map[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	/* Root stays root (runsc needs the host's root for cgroups, mounts
	 * and namespaces); nobody becomes the sandbox's own id; nothing else
	 * is mapped. */
	int n = snprintf(map, sizeof(map), "0 0 1\n65534 %u 1\n", id);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return gv_err_errno(err, "open %s", path);
	ssize_t w = write(fd, map, (size_t)n);
	int e = errno;
	close(fd);
	if (w != n) {
		errno = w < 0 ? e : EIO;
		return gv_err_errno(err, "write %s", path);
	}
	return 0;
}

/* A child unshares a user namespace and waits; we write its maps, keep
 * the namespace as an fd, and let the child go. */
static int make_userns(uint32_t id, int *out, struct gv_err *err)
{
	int up[2], down[2];
	if (pipe2(up, O_CLOEXEC) != 0)
		return gv_err_errno(err, "pipe");
	if (pipe2(down, O_CLOEXEC) != 0) {
		close(up[0]);
		close(up[1]);
		return gv_err_errno(err, "pipe");
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(up[0]);
		close(up[1]);
		close(down[0]);
		close(down[1]);
		errno = e;
		return gv_err_errno(err, "fork");
	}
	if (pid == 0) {
		/* Only our ends: the parent's close of down[1] must reach us as EOF. */
		close(up[0]);
		close(down[1]);
		char ok = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
		if (write(up[1], &ok, 1) != 1)
			_exit(1);
		char c;
		/* Until the parent has what it needs (EOF when it is done). */
		while (read(down[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	char ok = 'n';
	ssize_t r;
	do
		r = read(up[0], &ok, 1);
	while (r < 0 && errno == EINTR);
	int rc = 0;
	if (r != 1 || ok != 'y') {
		rc = gv_err_set(err, GV_ESANDBOX, "cannot make a user namespace (are user namespaces enabled?)");
	} else if (write_map(pid, "uid_map", id, err) != 0 || write_map(pid, "gid_map", id, err) != 0) {
		rc = -1;
	} else {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		*out = open(path, O_RDONLY | O_CLOEXEC);
		if (*out < 0)
			rc = gv_err_errno(err, "open %s", path);
	}
	close(up[0]);
	close(down[1]);
	int st;
	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
	if (rc != 0)
		gv_err_prefix(err, "user namespace for sandbox uid %u", id);
	return rc;
}

int exec_uids_prepare_root(const char *work_root, bool *mounted, struct gv_err *err)
{
	*mounted = false;
	struct statvfs vfs;
	if (statvfs(work_root, &vfs) != 0)
		return gv_err_errno(err, "statvfs %s", work_root);
	if (!(vfs.f_flag & (ST_NOSUID | ST_NODEV)))
		return 0;
	if (mount(work_root, work_root, NULL, MS_BIND, NULL) != 0)
		return gv_err_errno(err, "work root %s is on a nosuid/nodev mount, which sandboxes with their own "
				    "uid cannot use; binding it without them", work_root);
	/* A bind remount sets exactly these flags: neither nosuid nor nodev. */
	if (mount(NULL, work_root, NULL, MS_BIND | MS_REMOUNT, NULL) != 0 || statvfs(work_root, &vfs) != 0 ||
	    (vfs.f_flag & (ST_NOSUID | ST_NODEV))) {
		int e = errno;
		umount2(work_root, MNT_DETACH);
		errno = e;
		return gv_err_errno(err, "work root %s: remount without nosuid/nodev", work_root);
	}
	*mounted = true;
	return 0;
}

void exec_uids_release_root(const char *work_root, bool mounted)
{
	if (mounted)
		umount2(work_root, MNT_DETACH);
}

int exec_uids_take(struct exec_uids *u, unsigned *slot, struct gv_err *err)
{
	if (u->dir_fd < 0)
		return gv_err_set(err, GV_ESANDBOX, "sandbox uids: not initialised");
	for (unsigned k = 0; k < u->count; k++) {
		unsigned i = (u->next + k) % u->count;
		if (u->lock_fd[i] >= 0)
			continue;
		char name[32];
		snprintf(name, sizeof(name), "uid-%u", exec_uids_uid(u, i));
		int got = exec_lockdir_try(u->dir_fd, name, "sandbox uids", &u->lock_fd[i], err);
		if (got < 0)
			return -1;
		if (!got)
			continue;
		if (make_userns(exec_uids_uid(u, i), &u->userns_fd[i], err) != 0) {
			exec_uids_give(u, i);
			return -1;
		}
		u->next = (i + 1) % u->count;
		*slot = i;
		return 0;
	}
	return gv_err_set(err, GV_ELIMIT, "all %u sandbox uids of this node are in use", u->count);
}

void exec_uids_give(struct exec_uids *u, unsigned slot)
{
	if (slot >= u->count)
		return;
	/* Not kept for the next holder: round-robin would otherwise leave an
	 * open namespace per uid of the range in every long-lived worker. */
	if (u->userns_fd[slot] >= 0) {
		close(u->userns_fd[slot]);
		u->userns_fd[slot] = -1;
	}
	if (u->lock_fd[slot] >= 0) {
		close(u->lock_fd[slot]); /* drops the lock */
		u->lock_fd[slot] = -1;
	}
}
