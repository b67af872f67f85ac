/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE   /* sched_getaffinity, CPU_* */
#include "daemon/options/eal_args.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/config/config.h"
#include "control/config/cpu_list.h"

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool mlv_eal_args_have_lcores(char *const *args, int n)
{
	for (int i = 0; i < n; i++) {
		const char *a = args[i];

		if (starts_with(a, "--")) {
			if (strcmp(a, "--lcores") == 0 ||
			    starts_with(a, "--lcores="))
				return true;
			continue;
		}
		/* -l LIST, -lLIST, -c MASK, -cMASK */
		if (starts_with(a, "-l") || starts_with(a, "-c"))
			return true;
	}
	return false;
}

const char *mlv_eal_args_single_process(char *const *args, int n)
{
	static const char *const single[] = {
		"--in-memory", "--no-shconf", "--no-huge",
	};

	for (int i = 0; i < n; i++)
		for (size_t j = 0; j < sizeof(single) / sizeof(single[0]); j++)
			if (strcmp(args[i], single[j]) == 0)
				return single[j];
	return NULL;
}

static bool have_log_level(char *const *args, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(args[i], "--log-level") == 0 ||
		    starts_with(args[i], "--log-level="))
			return true;
	return false;
}

/* DPDK's numeric levels (rte_log.h: ERR 4, WARNING 5, NOTICE 6, INFO 7,
 * DEBUG 8). Our "info" maps to DPDK's NOTICE because DPDK's INFO is a
 * start-up chatter of every probed device and memory segment. */
static int dpdk_log_level(enum mlv_log_level level)
{
	switch (level) {
	case MLV_LOG_ERROR:   return 4;
	case MLV_LOG_WARNING: return 5;
	case MLV_LOG_INFO:    return 6;
	case MLV_LOG_DEBUG:   return 8;
	default:              return 6;
	}
}

static enum mlv_err push(struct mlv_eal_args *a, const char *s)
{
	char *copy = strdup(s);

	if (!copy)
		return MLV_E_NOMEM;
	a->argv_orig[a->argc] = copy;
	a->argv[a->argc] = copy;
	a->argc++;
	return MLV_OK;
}

/* "0-1,4" for the CPUs allowed; "none" when there is none. */
static void cpu_list(const bool *allowed, size_t n, char *buf, size_t len)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (size_t c = 0; c < n && c < CPU_SETSIZE; c++)
		if (allowed[c])
			CPU_SET(c, &set);
	mlv_cpu_list_format(&set, buf, len);
	if (!buf[0])
		snprintf(buf, len, "none");
}

enum mlv_err mlv_eal_args_check_cpus(char *const *args, int n,
				     uint32_t workers, const bool *allowed,
				     size_t n_allowed, char *why, size_t why_len)
{
	bool own[CPU_SETSIZE];
	char have[256];

	if (mlv_eal_args_have_lcores(args, n))
		return MLV_OK;
	if (!allowed) {
		cpu_set_t set;

		CPU_ZERO(&set);
		if (sched_getaffinity(0, sizeof(set), &set) != 0)
			return MLV_OK;     /* nothing to compare with */
		for (int c = 0; c < CPU_SETSIZE; c++)
			own[c] = CPU_ISSET(c, &set);
		allowed = own;
		n_allowed = CPU_SETSIZE;
	}
	for (uint32_t c = 0; c <= workers; c++) {
		if (c < n_allowed && allowed[c])
			continue;
		cpu_list(allowed, n_allowed, have, sizeof(have));
		snprintf(why, why_len, "dataplane.workers: %u worker%s need%s "
			 "CPUs 0-%u (CPU 0 for the control thread, one more per "
			 "worker), but this process may run on CPUs %s only "
			 "(sched_getaffinity); lower dataplane.workers, or name "
			 "the lcores with -l or --lcores in dataplane.eal_args",
			 workers, workers == 1 ? "" : "s",
			 workers == 1 ? "s" : "", workers, have);
		return MLV_E_CONFIG;
	}
	return MLV_OK;
}

enum mlv_err mlv_eal_args_build(const char *prog, char *const *args, int n,
				uint32_t workers, enum mlv_log_level level,
				struct mlv_eal_args *out)
{
	/* prog, args, up to two for lcores, one for the log level, NULL */
	size_t cap = (size_t)n + 5;
	enum mlv_err err = MLV_OK;
	char buf[64];

	memset(out, 0, sizeof(*out));
	if (workers == 0 || workers > MLV_MAX_WORKERS || n < 0)
		return MLV_E_RANGE;
	out->argv = calloc(cap, sizeof(char *));
	out->argv_orig = calloc(cap, sizeof(char *));
	if (!out->argv || !out->argv_orig) {
		err = MLV_E_NOMEM;
		goto fail;
	}
	if ((err = push(out, prog)))
		goto fail;
	for (int i = 0; i < n; i++)
		if ((err = push(out, args[i])))
			goto fail;
	if (!mlv_eal_args_have_lcores(args, n)) {
		snprintf(buf, sizeof(buf), "0-%u", workers);
		if ((err = push(out, "-l")) || (err = push(out, buf)))
			goto fail;
	}
	if (!have_log_level(args, n)) {
		snprintf(buf, sizeof(buf), "--log-level=%d",
			 dpdk_log_level(level));
		if ((err = push(out, buf)))
			goto fail;
	}
	return MLV_OK;
fail:
	mlv_eal_args_free(out);
	return err;
}

void mlv_eal_args_replace(struct mlv_eal_args *a, int i, char *text)
{
	if (i <= 0 || i >= a->argc) {
		free(text);
		return;
	}
	free(a->argv_orig[i]);
	a->argv_orig[i] = text;
	a->argv[i] = text;
}

enum mlv_err mlv_eal_args_append(struct mlv_eal_args *a, char *text)
{
	char **argv = realloc(a->argv, ((size_t)a->argc + 2) * sizeof(*argv));
	char **orig;

	if (argv)
		a->argv = argv;
	orig = argv ? realloc(a->argv_orig,
			      ((size_t)a->argc + 2) * sizeof(*orig)) : NULL;
	if (!orig) {
		free(text);
		return MLV_E_NOMEM;
	}
	a->argv_orig = orig;
	a->argv[a->argc] = a->argv_orig[a->argc] = text;
	a->argc++;
	a->argv[a->argc] = a->argv_orig[a->argc] = NULL;
	return MLV_OK;
}

void mlv_eal_args_free(struct mlv_eal_args *a)
{
	if (a->argv_orig)
		for (int i = 0; i < a->argc; i++)
			free(a->argv_orig[i]);
	free(a->argv_orig);
	free(a->argv);
	memset(a, 0, sizeof(*a));
}
