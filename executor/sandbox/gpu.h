/* GPUs of one executor node: the inventory the config declares, the check
 * that the installed runsc can give a sandbox GPUs at all (its GPU proxy,
 * `--nvproxy`), and the assignment of exact device ids to jobs.
 *
 * Fail closed. A node that declares real GPUs starts only when `runsc flags`
 * lists -nvproxy and every device node (/dev/nvidia<id>, /dev/nvidiactl,
 * /dev/nvidia-uvm) is a character device; otherwise the executor refuses to
 * start, naming what is missing. A GPU job is never run without the proxy.
 *
 * A simulated inventory (executor.gpu_simulated = true) is for tests only:
 * it lets the scheduler, quotas, assignment, NVIDIA_VISIBLE_DEVICES, audit
 * and usage be exercised on a machine without GPUs. Its sandboxes get the
 * variable and no device at all (there is none to give), and the executor
 * logs a warning at start.
 *
 * Assignment is shared by the worker processes: the table lives in the
 * daemon's MAP_SHARED memory and each device's owner is set with an atomic
 * compare-and-swap, so two workers never get the same device. The
 * scheduler never places more GPUs on a node than it declared (its count
 * comes from the job tokens in the node's lists), so a claim only fails
 * when that view was stale; the job is then handed back. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/err.h"

#define EXEC_GPU_MAX 16
/* "0,1,...,15" and the longest ids fit. */
#define EXEC_GPU_IDS_TEXT_MAX (EXEC_GPU_MAX * 5)
/* Device nodes one job may need: its GPUs plus the control nodes. */
#define EXEC_GPU_NODES_MAX (EXEC_GPU_MAX + 3)

struct exec_gpu_inventory {
	unsigned n;                /* declared devices; 0: no GPUs */
	unsigned ids[EXEC_GPU_MAX];
	bool simulated;            /* test inventory: no device, no proxy */
};

/* Parses executor.gpus: "" (none) or comma-separated device ids, each
 * 0..255, no duplicates, at most EXEC_GPU_MAX. Pure. */
int exec_gpu_parse_ids(const char *text, struct exec_gpu_inventory *inv, struct gv_err *err) GV_MUST_CHECK;

/* True when the output of `runsc flags` lists the GPU proxy flag
 * (-nvproxy, or --nvproxy, as a whole flag name). Pure. */
bool exec_gpu_flags_have_nvproxy(const char *flags_output);

/* The inventory of this node from its config: ids (executor.gpus) and
 * simulated (executor.gpu_simulated). Real GPUs need runsc's GPU proxy
 * (`runsc flags` is run with argv and a clean env) and their device nodes
 * under dev_dir ("/dev"); either missing is an error that says so. A
 * simulated inventory checks neither. */
int exec_gpu_inventory_init(struct exec_gpu_inventory *inv, const char *ids, bool simulated,
			    const char *runsc_path, const char *dev_dir, struct gv_err *err) GV_MUST_CHECK;

/* The assignment table, placed in memory shared by the workers. */
struct exec_gpu_table {
	unsigned n;
	unsigned ids[EXEC_GPU_MAX];
	int owner[EXEC_GPU_MAX]; /* 0 free, else worker index + 1 */
};

void exec_gpu_table_init(struct exec_gpu_table *t, const struct exec_gpu_inventory *inv);
/* Claims count free devices for worker (>= 0) into out (ids, ascending
 * table order). 0 done; -1 (GV_ELIMIT) when fewer are free, nothing kept. */
int exec_gpu_claim(struct exec_gpu_table *t, int worker, unsigned count, unsigned *out,
		   struct gv_err *err) GV_MUST_CHECK;
/* Frees every device the worker holds (job end, or the worker died). */
void exec_gpu_release(struct exec_gpu_table *t, int worker);

/* "0,1": the ids as NVIDIA_VISIBLE_DEVICES and the audit record write
 * them. -1 when size is too small. */
int exec_gpu_ids_text(const unsigned *ids, unsigned n, char *out, size_t size);

/* A device node to expose in the OCI spec (linux.devices). */
struct exec_gpu_node {
	char path[32];
	unsigned major, minor;
	unsigned mode;
};

/* The device nodes a job with these ids needs: /dev/nvidia<id> for each,
 * then /dev/nvidiactl, /dev/nvidia-uvm (and /dev/nvidia-uvm-tools when
 * present), read with stat under dev_dir. Real inventories only: fails
 * when a node is missing or not a character device. */
int exec_gpu_device_nodes(const char *dev_dir, const unsigned *ids, unsigned n, struct exec_gpu_node *out,
			  size_t cap, size_t *nout, struct gv_err *err) GV_MUST_CHECK;
