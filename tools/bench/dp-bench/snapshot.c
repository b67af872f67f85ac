/* SPDX-License-Identifier: BSD-3-Clause */
/* Snapshots of a running forwarder, taken by dp-bench-result while the
 * forwarder runs: its packet counters together with the CPU time its
 * forwarding thread has had (/proc/PID/task/TID/schedstat, nanoseconds
 * on the CPU). This machine's two cores are shared with other work, so
 * the thread does not always have its core: packets per second of CPU
 * time then describe the forwarder, packets per wall second the machine.
 *
 * A snapshot is taken right after the forwarder has published a new
 * counter reading (maglevd: a fresh stats file, renamed into place;
 * testpmd: a new periodic statistics block), so counters and CPU time
 * describe the same moment to within the poll interval (1 ms). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tools/bench/dp-bench/result.h"

#define POLL_NS (1000 * 1000)

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void poll_pause(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = POLL_NS};

	nanosleep(&ts, NULL);
}

/* The id of the thread of process pid named name (its comm), or -1. */
static long find_thread(long pid, const char *name)
{
	char path[320], comm[64];
	struct dirent *de;
	long tid = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (tid < 0 && (de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%s/comm", pid,
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			if (strcmp(comm, name) == 0)
				tid = atol(de->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return tid;
}

/* Nanoseconds thread tid of pid has run, or -1. */
static double sched_ns(long pid, long tid)
{
	char path[64];
	double ns = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/schedstat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lf", &ns) != 1)
		ns = -1;
	fclose(f);
	return ns;
}

/* The inode of path (renaming a new file into place changes it), or 0. */
static ino_t inode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_ino : 0;
}

struct target {
	const char *out;
	long pid, tid;
	double timeout_s;
};

static int parse_target(int argc, char **argv, const char **input,
			struct target *t)
{
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'},
		{"pid", required_argument, NULL, 'p'},
		{"thread", required_argument, NULL, 't'},
		{"out", required_argument, NULL, 'o'},
		{"timeout", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	const char *thread = NULL;
	double deadline;
	int c;

	*t = (struct target){.pid = -1, .timeout_s = 10};
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': *input = optarg; break;
		case 'p': t->pid = atol(optarg); break;
		case 't': thread = optarg; break;
		case 'o': t->out = optarg; break;
		case 'w': t->timeout_s = atof(optarg); break;
		default: return 2;
		}
	}
	if (!*input || !thread || !t->out || t->pid <= 0 || optind != argc) {
		fprintf(stderr, "dp-bench-result snapshot: --input, --pid, "
			"--thread and --out are required\n");
		return 2;
	}
	/* The process may still be starting (exec, EAL init): its thread
	 * appears within the timeout or never. */
	deadline = mono_s() + t->timeout_s;
	while ((t->tid = find_thread(t->pid, thread)) < 0) {
		if (mono_s() > deadline) {
			fprintf(stderr, "dp-bench-result: process %ld has no "
				"thread named %s\n", t->pid, thread);
			return 1;
		}
		poll_pause();
	}
	return 0;
}

static int write_doc(json_t *doc, const char *out)
{
	int rc = json_dump_file(doc, out, JSON_COMPACT) == 0 ? 0 : 1;

	if (rc)
		fprintf(stderr, "dp-bench-result: cannot write %s\n", out);
	json_decref(doc);
	return rc;
}

/* snapshot-maglevd --input STATS --pid P --thread NAME --out FILE:
 * wait for maglevd to write STATS anew, then save it with the thread's
 * CPU time ("dpb_sched_ns") and the time ("dpb_mono_s") added. */
int dpb_cmd_snapshot_maglevd(int argc, char **argv)
{
	const char *stats = NULL;
	struct target t;
	double deadline, ns;
	json_error_t e;
	json_t *doc;
	ino_t old;
	int rc;

	if ((rc = parse_target(argc, argv, &stats, &t)))
		return rc;
	old = inode_of(stats);
	deadline = mono_s() + t.timeout_s;
	while (inode_of(stats) == old || inode_of(stats) == 0) {
		if (mono_s() > deadline) {
			fprintf(stderr, "dp-bench-result: %s not rewritten within "
				"%.0f s\n", stats, t.timeout_s);
			return 1;
		}
		poll_pause();
	}
	ns = sched_ns(t.pid, t.tid);
	doc = json_load_file(stats, 0, &e);
	if (!doc || ns < 0) {
		fprintf(stderr, "dp-bench-result: %s: %s\n", stats,
			doc ? "the thread is gone" : e.text);
		json_decref(doc);
		return 1;
	}
	if (json_object_set_new(doc, "dpb_sched_ns", json_real(ns)) ||
	    json_object_set_new(doc, "dpb_mono_s", json_real(mono_s()))) {
		json_decref(doc);
		return 1;
	}
	return write_doc(doc, t.out);
}

/* The complete statistics blocks of `port` in a testpmd log (a block is
 * complete once its Tx-pps line is out) and the TX-packets of the last. */
static int read_blocks(const char *log, int port, unsigned *blocks,
		       double *tx_packets)
{
	FILE *f = fopen(log, "r");
	char line[512];
	int cur = -1;
	double tx = -1;

	if (!f)
		return -1;
	*blocks = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p;

		if ((p = strstr(line, "NIC statistics for port "))) {
			cur = atoi(p + strlen("NIC statistics for port "));
		} else if (cur == port && (p = strstr(line, "TX-packets:"))) {
			tx = strtod(p + strlen("TX-packets:"), NULL);
		} else if (cur == port && strstr(line, "Tx-pps:") && tx >= 0) {
			(*blocks)++;
			*tx_packets = tx;
			cur = -1;
		}
	}
	fclose(f);
	return 0;
}

/* snapshot-testpmd --input LOG --pid P --thread NAME --out FILE: wait
 * for the next statistics block of port 1 (the net_null port testpmd
 * forwards into) and save its TX-packets with the thread's CPU time. */
int dpb_cmd_snapshot_testpmd(int argc, char **argv)
{
	const char *log = NULL;
	unsigned n0 = 0, n;
	double tx = 0, deadline, ns;
	struct target t;
	int rc;

	if ((rc = parse_target(argc, argv, &log, &t)))
		return rc;
	if (read_blocks(log, 1, &n0, &tx) < 0) {
		perror(log);
		return 1;
	}
	deadline = mono_s() + t.timeout_s;
	for (;;) {
		if (read_blocks(log, 1, &n, &tx) < 0) {
			perror(log);
			return 1;
		}
		if (n > n0)
			break;
		if (mono_s() > deadline) {
			fprintf(stderr, "dp-bench-result: %s: no new statistics "
				"within %.0f s\n", log, t.timeout_s);
			return 1;
		}
		poll_pause();
	}
	ns = sched_ns(t.pid, t.tid);
	if (ns < 0) {
		fprintf(stderr, "dp-bench-result: testpmd's thread is gone\n");
		return 1;
	}
	return write_doc(json_pack("{s:i, s:f, s:f, s:f}", "blocks", (int)n,
				   "tx_packets", tx, "dpb_sched_ns", ns,
				   "dpb_mono_s", mono_s()), t.out);
}
