/* state — nothing a test leaves behind reaches the next test. Judged (the
 * fixture under tests/security/judge/ runs it as a submission: 4 tests,
 * one sandbox), every test first looks for what earlier tests planted,
 * then plants it again for the tests after it:
 *   - in every directory it can write to (found by walking the file system
 *     but /proc, /sys and /usr, plus the usual scratch places): a file, a
 *     hidden file, a directory it tries to lock with mode 0 holding a
 *     file, and a chain of 32 nested directories;
 *   - System V shared memory, semaphores and a message queue, and a POSIX
 *     message queue, under fixed keys (these outlive every process);
 * and reports anything planted by an earlier test as ESCAPED. It must plant
 * at least one file, or the check is empty and it says so as an escape.
 * Stdin: "TEST <k>" (the test's number). */
#include "probe.h"

#include <mqueue.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

#define TAG "gavel-state"
#define IPC_KEY 0x67764c53 /* fixed: an earlier test's object has the same key */
#define MAX_DIRS 256

static char dirs[MAX_DIRS][512];
static int ndirs;
static long entries;

static void add_dir(const char *path)
{
	char cwd[512];
	if (!strcmp(path, ".") && getcwd(cwd, sizeof cwd))
		path = cwd;
	for (int i = 0; i < ndirs; i++)
		if (!strcmp(dirs[i], path))
			return;
	if (ndirs < MAX_DIRS && access(path, W_OK | X_OK) == 0)
		snprintf(dirs[ndirs++], sizeof dirs[0], "%s", path);
}

/* Every directory we may write to; our own plants are skipped (they are
 * looked for by name below). */
static void find_writable(const char *dir, int depth)
{
	if (depth > 12 || entries > 100000)
		return;
	add_dir(dir);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, "..") || strstr(n, TAG))
			continue;
		entries++;
		if (depth == 0 && (!strcmp(n, "proc") || !strcmp(n, "sys") || !strcmp(n, "usr")))
			continue;
		char path[512];
		if (snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", n) >= (int)sizeof path)
			continue;
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			find_writable(path, depth + 1);
	}
	closedir(d);
}

static void look(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, TAG))
			continue;
		char path[1024], buf[64] = "";
		snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", de->d_name);
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof buf - 1);
			buf[n > 0 ? n : 0] = 0;
			close(fd);
			buf[strcspn(buf, "\n")] = 0;
		}
		escaped("left by an earlier test: %s (%s)", path, buf);
	}
	closedir(d);
}

static int write_file(const char *path, int test)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	dprintf(fd, "planted by test %d\n", test);
	close(fd);
	return 0;
}

/* Returns how many things were planted in dir. */
static int plant(const char *dir, int test)
{
	char path[1024];
	int n = 0;
	if (!strcmp(dir, "/"))
		dir = "";
	snprintf(path, sizeof path, "%s/%s-file-%d", dir, TAG, test);
	n += write_file(path, test) == 0;
	snprintf(path, sizeof path, "%s/.%s-hidden-%d", dir, TAG, test);
	n += write_file(path, test) == 0;
	snprintf(path, sizeof path, "%s/%s-locked-%d", dir, TAG, test);
	if (mkdir(path, 0700) == 0) {
		n++;
		char inner[1100];
		snprintf(inner, sizeof inner, "%s/inner", path);
		write_file(inner, test);
		chmod(path, 0); /* EPERM outside the compile phase: fine */
	}
	snprintf(path, sizeof path, "%s/%s-deep-%d", dir, TAG, test);
	if (mkdir(path, 0700) == 0) {
		n++;
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		for (int i = 0; i < 32 && fd >= 0; i++) {
			if (mkdirat(fd, "d", 0700) != 0)
				break;
			int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			close(fd);
			fd = next;
		}
		if (fd >= 0)
			close(fd);
	}
	return n;
}

static void look_ipc(void)
{
	int id;
	if ((id = shmget(IPC_KEY, 0, 0)) >= 0)
		escaped("System V shared memory of an earlier test (key %#x, id %d)", IPC_KEY, id);
	if ((id = semget(IPC_KEY, 0, 0)) >= 0)
		escaped("System V semaphores of an earlier test (key %#x, id %d)", IPC_KEY, id);
	if ((id = msgget(IPC_KEY, 0)) >= 0) {
		struct { long type; char text[64]; } m;
		ssize_t n = msgrcv(id, &m, sizeof m.text - 1, 0, IPC_NOWAIT);
		m.text[n > 0 ? n : 0] = 0;
		escaped("System V message queue of an earlier test (key %#x): %s", IPC_KEY, n > 0 ? m.text : "");
	}
	mqd_t q = mq_open("/" TAG, O_RDONLY | O_NONBLOCK);
	if (q != (mqd_t)-1) {
		escaped("POSIX message queue /%s of an earlier test", TAG);
		mq_close(q);
	}
}

static int plant_ipc(int test)
{
	int n = 0, id;
	if ((id = shmget(IPC_KEY, 4096, IPC_CREAT | 0600)) >= 0) {
		n++;
		info("planted System V shared memory (id %d)", id);
	} else {
		blocked("shmget: errno=%d (%s)", errno, strerror(errno));
	}
	if ((id = semget(IPC_KEY, 1, IPC_CREAT | 0600)) >= 0) {
		n++;
		info("planted System V semaphores (id %d)", id);
	} else {
		blocked("semget: errno=%d (%s)", errno, strerror(errno));
	}
	if ((id = msgget(IPC_KEY, IPC_CREAT | 0600)) >= 0) {
		struct { long type; char text[64]; } m = { 1, "" };
		snprintf(m.text, sizeof m.text, "planted by test %d", test);
		msgsnd(id, &m, strlen(m.text) + 1, IPC_NOWAIT);
		n++;
		info("planted a System V message queue (id %d)", id);
	} else {
		blocked("msgget: errno=%d (%s)", errno, strerror(errno));
	}
	struct mq_attr a = { .mq_maxmsg = 1, .mq_msgsize = 64 };
	mqd_t q = mq_open("/" TAG, O_WRONLY | O_CREAT | O_NONBLOCK, 0600, &a);
	if (q != (mqd_t)-1) {
		n++;
		info("planted POSIX message queue /%s", TAG);
		mq_close(q);
	} else {
		blocked("mq_open: errno=%d (%s)", errno, strerror(errno));
	}
	return n;
}

int main(void)
{
	char input[4096];
	ssize_t got = read(0, input, sizeof input - 1);
	input[got > 0 ? got : 0] = 0;
	int test = 0;
	char *t = strstr(input, "TEST ");
	if (t)
		test = atoi(t + 5);
	if (strstr(input, "CLEANUP")) {
		/* By hand on a host only: remove the IPC objects a run made. */
		shmctl(shmget(IPC_KEY, 0, 0), IPC_RMID, NULL);
		semctl(semget(IPC_KEY, 0, 0), 0, IPC_RMID);
		msgctl(msgget(IPC_KEY, 0), IPC_RMID, NULL);
		mq_unlink("/" TAG);
		return 0;
	}

	static const char *const usual[] = { "/tmp", "/box", "/dev/shm", "/var/tmp", "/run", "/var/lock",
					      "/dev/mqueue", "." };
	for (size_t i = 0; i < sizeof usual / sizeof usual[0]; i++)
		add_dir(usual[i]);
	find_writable("/", 0);
	char *home = getenv("HOME");
	if (home)
		add_dir(home);

	for (int i = 0; i < ndirs; i++)
		look(dirs[i]);
	look_ipc();

	int planted = 0, places = 0;
	char where[160] = "";
	for (int i = 0; i < ndirs; i++) {
		int n = plant(dirs[i], test);
		if (n) {
			planted += n;
			places++;
			if (strlen(where) + strlen(dirs[i]) + 2 < sizeof where)
				strcat(strcat(where, " "), dirs[i]);
			info("planted %d things in %s", n, dirs[i]);
		} else {
			blocked("nothing could be planted in %s (writable by access()): errno=%d", dirs[i], errno);
		}
	}
	planted += plant_ipc(test);
	if (planted == 0)
		escaped("nothing could be planted anywhere: the probe tests nothing (treat as a failure)");
	printf("EVIDENCE test %d planted %d things in %d dirs:%s\n", test, planted, places, where);
	return finish();
}
