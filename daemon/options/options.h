/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevd's command line:
 *
 *   maglevd [-c FILE] [options] [-- EAL args]
 *   maglevd --check-config FILE
 *
 * Everything after "--" replaces dataplane.eal_args from the config.
 * Plain C, no DPDK: the options are parsed before the EAL exists.
 * Control thread (main) only; uses getopt_long, so not re-entrant.
 */
#ifndef MLV_DAEMON_OPTIONS_H
#define MLV_DAEMON_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "control/base/error.h"
#include "control/base/log.h"

/* The configuration without -c: sysconfdir/maglevd/maglevd.yaml, fixed
 * by the build (/etc/maglevd/maglevd.yaml for a /usr install). */
extern const char mlv_options_default_config[];

#define MLV_STATS_INTERVAL_DEFAULT_MS 1000u
#define MLV_STATS_INTERVAL_MIN_MS     10u
#define MLV_STATS_INTERVAL_MAX_MS     3600000u

enum mlv_run_mode {
	MLV_MODE_RUN = 0,        /* start the data plane */
	MLV_MODE_CHECK_CONFIG,   /* load + validate, print OK or errors */
	MLV_MODE_HELP,
	MLV_MODE_VERSION,
};

struct mlv_options {
	enum mlv_run_mode mode;
	const char *config_path;     /* -c, the --check-config argument, or
					mlv_options_default_config */
	bool config_is_default;      /* no -c: config_path is the default */
	enum mlv_log_level log_level;
	enum mlv_log_format log_format;   /* --log-format, text by default */
	const char *stats_file;      /* NULL: no stats file */
	uint32_t stats_interval_ms;
	bool watch_config;           /* reload when the file changes (inotify);
					--no-watch-config turns it off */
	/* EAL arguments after "--"; has_eal_override is true even when
	 * "--" is followed by nothing (an empty override is still one). */
	bool has_eal_override;
	int n_eal_override;
	char **eal_override;         /* points into argv */
};

/* Parse argv into *opts (pointers into argv; nothing allocated). On bad
 * usage writes one line naming the problem to err and returns
 * MLV_E_INVAL. Resets getopt's state, so tests may call it repeatedly. */
enum mlv_err mlv_options_parse(int argc, char **argv,
			       struct mlv_options *opts, FILE *err);

/* The --help text. */
void mlv_options_usage(FILE *out);

#endif
