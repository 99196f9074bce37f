/* The test frameworks' shared facts (executor/judge/suite_framework.h). */
#include "executor/judge/suite_framework.h"

#include <stddef.h>
#include <string.h>

static const char *const names[] = {
	[SUITE_PYTEST] = "pytest",
	[SUITE_JUNIT5] = "junit5",
	[SUITE_GTEST] = "gtest",
	[SUITE_C] = "c",
};

int suite_framework_of(const char *name)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return -1;
}

const char *suite_framework_name(enum suite_framework f)
{
	return names[f];
}

uint32_t suite_startup_ms(enum suite_framework f)
{
	switch (f) {
	case SUITE_PYTEST:
		return 3000;
	case SUITE_JUNIT5:
		/* The JVM and the console launcher take ~5 s on an idle node
		 * inside gVisor (syscalls count as user time); 6 s timed out
		 * every test of an AC submission on a loaded 2-core node. */
		return 15000;
	case SUITE_GTEST:
	case SUITE_C:
		return 200;
	}
	return 0;
}

bool suite_native(enum suite_framework f)
{
	return f == SUITE_GTEST || f == SUITE_C;
}

bool suite_builds_tests(enum suite_framework f)
{
	return f != SUITE_PYTEST;
}

uint64_t suite_as_bytes(enum suite_framework f, uint64_t memory_mb)
{
	switch (f) {
	case SUITE_GTEST:
	case SUITE_C:
		return (memory_mb + 64) << 20;
	case SUITE_PYTEST:
		return (memory_mb + 256) << 20;
	case SUITE_JUNIT5:
		break;
	}
	return 0;
}

uint32_t suite_overhead_mb(enum suite_framework f)
{
	return f == SUITE_PYTEST ? 384 : 768;
}
