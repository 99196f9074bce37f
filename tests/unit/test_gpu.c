/* Unit tests of executor/sandbox/gpu.c (inventory parsing, GPU-proxy detection
 * in `runsc flags` output, assignment of device ids, device nodes) and of the
 * GPU part of the OCI spec (executor/sandbox/bundle.c): NVIDIA_VISIBLE_DEVICES
 * is the only variable added, device nodes only when given. */
#include "executor/sandbox/bundle.h"
#include "executor/sandbox/gpu.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void gpu__parse_ids__good_and_bad(void **state)
{
	(void)state;
	struct exec_gpu_inventory inv;
	struct gv_err err;
	assert_int_equal(exec_gpu_parse_ids("", &inv, &err), 0);
	assert_int_equal(inv.n, 0);
	assert_int_equal(exec_gpu_parse_ids(NULL, &inv, &err), 0);
	assert_int_equal(inv.n, 0);
	assert_int_equal(exec_gpu_parse_ids("0, 1,7", &inv, &err), 0);
	assert_int_equal(inv.n, 3);
	assert_int_equal(inv.ids[0], 0);
	assert_int_equal(inv.ids[1], 1);
	assert_int_equal(inv.ids[2], 7);
	static const char *const bad[] = { "0,0", "a", "1,", ",1", "256", "1;2", "-1", "0 1", "1000",
					   "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (exec_gpu_parse_ids(bad[i], &inv, &err) == 0)
			fail_msg("'%s' accepted", bad[i]);
}

static void gpu__flags__nvproxy_detected_as_whole_flag(void **state)
{
	(void)state;
	/* As Debian's runsc 0.0~20221219 prints its flags: no GPU proxy. */
	assert_false(exec_gpu_flags_have_nvproxy("  -allow-flag-override\n    \tallow OCI annotations\n"
						 "  -network string\n    \tnetworking type (default \"sandbox\")\n"));
	assert_true(exec_gpu_flags_have_nvproxy("  -network string\n  -nvproxy\n    \tEXPERIMENTAL: enable "
						"support for Nvidia GPUs.\n"));
	assert_true(exec_gpu_flags_have_nvproxy("  --nvproxy\n"));
	assert_true(exec_gpu_flags_have_nvproxy("  -nvproxy"));
	assert_false(exec_gpu_flags_have_nvproxy("  -nvproxy-docker\n"));
	assert_false(exec_gpu_flags_have_nvproxy("    \tsee -nvproxy for details\n"));
	assert_false(exec_gpu_flags_have_nvproxy(""));
}

static void gpu__inventory__real_refused_without_proxy(void **state)
{
	(void)state;
	struct exec_gpu_inventory inv;
	struct gv_err err;
	/* The installed runsc has no --nvproxy (RUNSC-NOTES.md); /bin/true
	 * prints no flags at all: both refuse, naming the flag. */
	const char *runsc = access("/usr/bin/runsc", X_OK) == 0 ? "/usr/bin/runsc" : "/bin/true";
	assert_int_equal(exec_gpu_inventory_init(&inv, "0", false, runsc, "/dev", &err), -1);
	assert_non_null(strstr(err.msg, "--nvproxy"));
	assert_int_equal(exec_gpu_inventory_init(&inv, "0", false, "/bin/true", "/dev", &err), -1);
	assert_non_null(strstr(err.msg, "--nvproxy"));
	/* Not runnable at all: refused too. */
	assert_int_equal(exec_gpu_inventory_init(&inv, "0", false, "/nonexistent/runsc", "/dev", &err), -1);
	/* Simulated: accepted without asking runsc; no devices, no GPUs. */
	assert_int_equal(exec_gpu_inventory_init(&inv, "0,1", true, "/nonexistent/runsc", "/dev", &err), 0);
	assert_true(inv.simulated);
	assert_int_equal(inv.n, 2);
	assert_int_equal(exec_gpu_inventory_init(&inv, "", true, "/bin/true", "/dev", &err), -1);
	assert_int_equal(exec_gpu_inventory_init(&inv, "", false, "/nonexistent/runsc", "/dev", &err), 0);
	assert_int_equal(inv.n, 0);
}

static void gpu__claim__exact_ids_and_release(void **state)
{
	(void)state;
	struct exec_gpu_inventory inv;
	struct gv_err err;
	assert_int_equal(exec_gpu_parse_ids("3,5,9", &inv, &err), 0);
	struct exec_gpu_table t;
	exec_gpu_table_init(&t, &inv);
	unsigned a[EXEC_GPU_MAX], b[EXEC_GPU_MAX], c[EXEC_GPU_MAX];
	assert_int_equal(exec_gpu_claim(&t, 0, 1, a, &err), 0);
	assert_int_equal(a[0], 3);
	assert_int_equal(exec_gpu_claim(&t, 1, 2, b, &err), 0);
	assert_int_equal(b[0], 5);
	assert_int_equal(b[1], 9);
	/* None free: refused, nothing kept. */
	assert_int_equal(exec_gpu_claim(&t, 2, 1, c, &err), -1);
	exec_gpu_release(&t, 0);
	assert_int_equal(exec_gpu_claim(&t, 2, 2, c, &err), -1);
	assert_int_equal(exec_gpu_claim(&t, 2, 1, c, &err), 0);
	assert_int_equal(c[0], 3);
	/* Releasing one worker frees only its own devices. */
	exec_gpu_release(&t, 1);
	assert_int_equal(t.owner[0], 3);
	assert_int_equal(t.owner[1], 0);
	assert_int_equal(t.owner[2], 0);
	char text[EXEC_GPU_IDS_TEXT_MAX];
	assert_int_equal(exec_gpu_ids_text(b, 2, text, sizeof(text)), 0);
	assert_string_equal(text, "5,9");
	assert_int_equal(exec_gpu_ids_text(b, 2, text, 3), -1);
	assert_int_equal(exec_gpu_ids_text(b, 0, text, sizeof(text)), 0);
	assert_string_equal(text, "");
}

static void gpu__device_nodes__char_devices_only(void **state)
{
	(void)state;
	char dir[] = "/tmp/gavel-test-gpu.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char p[256];
	/* Stand-ins: symlinks to /dev/null (a character device). */
	static const char *const names[] = { "nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		assert_int_equal(symlink("/dev/null", p), 0);
	}
	struct exec_gpu_node nodes[EXEC_GPU_NODES_MAX];
	size_t n = 0;
	struct gv_err err;
	unsigned one[] = { 1 };
	assert_int_equal(exec_gpu_device_nodes(dir, one, 1, nodes, EXEC_GPU_NODES_MAX, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(nodes[0].path, "/dev/nvidia1");
	assert_string_equal(nodes[1].path, "/dev/nvidiactl");
	assert_string_equal(nodes[2].path, "/dev/nvidia-uvm");
	assert_int_equal(nodes[0].major, 1); /* /dev/null is 1:3 */
	assert_int_equal(nodes[0].minor, 3);
	unsigned missing[] = { 2 };
	assert_int_equal(exec_gpu_device_nodes(dir, missing, 1, nodes, EXEC_GPU_NODES_MAX, &n, &err), -1);
	/* A regular file is not a device. */
	snprintf(p, sizeof(p), "%s/nvidia2", dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(exec_gpu_device_nodes(dir, missing, 1, nodes, EXEC_GPU_NODES_MAX, &n, &err), -1);
	assert_non_null(strstr(err.msg, "not a character device"));
	unlink(p);
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static struct exec_bundle_params params(void)
{
	struct exec_bundle_params p = {
		.hostname = "gavel",
		.cgroups_path = "/gavel/t/s",
		.init_path = "/opt/gavel-init",
		.etc_path = "/w/etc",
		.box_path = "/w/box",
		.memory_limit_bytes = 1 << 28,
		.pids_limit = 4096,
		.tmp_size_bytes = 1 << 26,
		.nofile = 64,
		.nproc = 64,
		.fsize_bytes = 1 << 20,
	};
	return p;
}

static size_t env_count(json_t *cfg, const char *prefix, const char **found)
{
	json_t *env = json_object_get(json_object_get(cfg, "process"), "env"), *v;
	size_t i, n = 0;
	json_array_foreach(env, i, v) {
		if (strncmp(json_string_value(v), prefix, strlen(prefix)) == 0) {
			n++;
			*found = json_string_value(v);
		}
	}
	return n;
}

static void gpu__bundle__env_and_devices(void **state)
{
	(void)state;
	struct gv_err err;
	struct exec_bundle_params p = params();
	json_t *cfg = exec_bundle_config(&p, &err);
	assert_non_null(cfg);
	const char *v = NULL;
	json_t *env = json_object_get(json_object_get(cfg, "process"), "env");
	assert_int_equal(json_array_size(env), 3);
	assert_int_equal(env_count(cfg, "NVIDIA", &v), 0);
	assert_null(json_object_get(json_object_get(cfg, "linux"), "devices"));
	json_decref(cfg);

	/* Simulated: the variable, no device. */
	p.gpu_visible = "1";
	cfg = exec_bundle_config(&p, &err);
	assert_non_null(cfg);
	assert_int_equal(env_count(cfg, "NVIDIA_VISIBLE_DEVICES=", &v), 1);
	assert_string_equal(v, "NVIDIA_VISIBLE_DEVICES=1");
	assert_int_equal(json_array_size(json_object_get(json_object_get(cfg, "process"), "env")), 4);
	assert_null(json_object_get(json_object_get(cfg, "linux"), "devices"));
	json_decref(cfg);

	/* Real: exactly the given nodes, and a deny-all device cgroup rule
	 * before the allows. */
	struct exec_gpu_node nodes[2] = { { "/dev/nvidia1", 195, 1, 0666 }, { "/dev/nvidiactl", 195, 255, 0666 } };
	p.gpu_nodes = nodes;
	p.n_gpu_nodes = 2;
	cfg = exec_bundle_config(&p, &err);
	assert_non_null(cfg);
	json_t *devs = json_object_get(json_object_get(cfg, "linux"), "devices");
	assert_int_equal(json_array_size(devs), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(devs, 0), "path")), "/dev/nvidia1");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(devs, 1), "minor")), 255);
	json_t *rules = json_object_get(json_object_get(json_object_get(cfg, "linux"), "resources"), "devices");
	assert_int_equal(json_array_size(rules), 3);
	assert_false(json_is_true(json_object_get(json_array_get(rules, 0), "allow")));
	assert_null(json_object_get(json_array_get(rules, 0), "major"));
	json_decref(cfg);

	/* Anything but digits and commas is refused. */
	p.n_gpu_nodes = 0;
	p.gpu_visible = "0\nLD_PRELOAD=/x";
	assert_null(exec_bundle_config(&p, &err));
	p.gpu_visible = "";
	assert_null(exec_bundle_config(&p, &err));
	p.gpu_visible = NULL;
	p.n_gpu_nodes = 2;
	assert_null(exec_bundle_config(&p, &err));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gpu__parse_ids__good_and_bad),
		cmocka_unit_test(gpu__flags__nvproxy_detected_as_whole_flag),
		cmocka_unit_test(gpu__inventory__real_refused_without_proxy),
		cmocka_unit_test(gpu__claim__exact_ids_and_release),
		cmocka_unit_test(gpu__device_nodes__char_devices_only),
		cmocka_unit_test(gpu__bundle__env_and_devices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
