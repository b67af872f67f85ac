/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/options/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#ifndef MLV_DEFAULT_CONFIG
#error "the build defines MLV_DEFAULT_CONFIG (daemon/options/meson.build)"
#endif
const char mlv_options_default_config[] = MLV_DEFAULT_CONFIG;

enum {
	OPT_CHECK_CONFIG = 256,
	OPT_LOG_LEVEL,
	OPT_LOG_FORMAT,
	OPT_STATS_FILE,
	OPT_STATS_INTERVAL,
	OPT_VERSION,
	OPT_NO_WATCH_CONFIG,
};

static const struct option long_options[] = {
	{"config",         required_argument, NULL, 'c'},
	{"check-config",   required_argument, NULL, OPT_CHECK_CONFIG},
	{"log-level",      required_argument, NULL, OPT_LOG_LEVEL},
	{"log-format",     required_argument, NULL, OPT_LOG_FORMAT},
	{"stats-file",     required_argument, NULL, OPT_STATS_FILE},
	{"stats-interval", required_argument, NULL, OPT_STATS_INTERVAL},
	{"no-watch-config", no_argument,      NULL, OPT_NO_WATCH_CONFIG},
	{"version",        no_argument,       NULL, OPT_VERSION},
	{"help",           no_argument,       NULL, 'h'},
	{NULL, 0, NULL, 0},
};

void mlv_options_usage(FILE *out)
{
	fputs(
"usage: maglevd [-c FILE] [options] [-- EAL arguments]\n"
"       maglevd --check-config FILE\n"
"\n"
"  -c, --config FILE        the YAML configuration (maglevd.yaml(5));\n"
"                           default " MLV_DEFAULT_CONFIG "\n"
"      --check-config FILE  load and validate FILE, print OK or the errors,\n"
"                           exit 0 or 1; touches no device\n"
"      --log-level LEVEL    error, warning, info (default) or debug\n"
"      --log-format FORMAT  text (default) or json: one object per line\n"
"      --stats-file PATH    write every counter as JSON to PATH (atomically)\n"
"      --stats-interval MS  how often to write it (default 1000)\n"
"      --no-watch-config    do not reload when the config file changes\n"
"                           (SIGHUP and maglevctl reload still do)\n"
"      --version            print the version and exit\n"
"  -h, --help               this text\n"
"\n"
"Arguments after \"--\" replace dataplane.eal_args. Without -l, --lcores or\n"
"-c among them, maglevd uses lcores 0..workers: the main lcore runs the\n"
"control thread, one lcore per worker.\n"
"Signals: SIGHUP reloads the configuration, SIGTERM/SIGINT stop cleanly.\n"
"The control socket (control.socket) serves maglevctl.\n",
	      out);
}

static bool parse_interval(const char *text, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' ||
	    v < MLV_STATS_INTERVAL_MIN_MS || v > MLV_STATS_INTERVAL_MAX_MS)
		return false;
	*out = (uint32_t)v;
	return true;
}

enum mlv_err mlv_options_parse(int argc, char **argv,
			       struct mlv_options *opts, FILE *err)
{
	bool want_version = false, want_help = false;
	const char *check = NULL;
	int c;

	memset(opts, 0, sizeof(*opts));
	opts->log_level = MLV_LOG_INFO;
	opts->stats_interval_ms = MLV_STATS_INTERVAL_DEFAULT_MS;
	opts->watch_config = true;

	optind = 0;     /* glibc: full re-initialisation */
	opterr = 0;     /* we print our own messages */
	/* "+": stop at the first non-option so stray words are reported
	 * instead of silently permuted away. */
	while ((c = getopt_long(argc, argv, "+:c:h", long_options, NULL)) != -1) {
		switch (c) {
		case 'c':
			opts->config_path = optarg;
			break;
		case OPT_CHECK_CONFIG:
			check = optarg;
			break;
		case OPT_LOG_LEVEL:
			if (!mlv_log_level_parse(optarg, &opts->log_level)) {
				fprintf(err, "maglevd: --log-level: '%s' is not "
					"one of error, warning, info, debug\n",
					optarg);
				return MLV_E_INVAL;
			}
			break;
		case OPT_LOG_FORMAT:
			if (!mlv_log_format_parse(optarg, &opts->log_format)) {
				fprintf(err, "maglevd: --log-format: '%s' is not "
					"text or json\n", optarg);
				return MLV_E_INVAL;
			}
			break;
		case OPT_STATS_FILE:
			if (!optarg[0]) {
				fprintf(err, "maglevd: --stats-file: empty path\n");
				return MLV_E_INVAL;
			}
			opts->stats_file = optarg;
			break;
		case OPT_STATS_INTERVAL:
			if (!parse_interval(optarg, &opts->stats_interval_ms)) {
				fprintf(err, "maglevd: --stats-interval: '%s' is "
					"not a number of milliseconds in %u..%u\n",
					optarg, MLV_STATS_INTERVAL_MIN_MS,
					MLV_STATS_INTERVAL_MAX_MS);
				return MLV_E_INVAL;
			}
			break;
		case OPT_NO_WATCH_CONFIG:
			opts->watch_config = false;
			break;
		case OPT_VERSION:
			want_version = true;
			break;
		case 'h':
			want_help = true;
			break;
		case ':':
			fprintf(err, "maglevd: %s needs an argument (see --help)\n",
				argv[optind - 1]);
			return MLV_E_INVAL;
		default:
			fprintf(err, "maglevd: unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			return MLV_E_INVAL;
		}
	}

	if (optind > 0 && optind <= argc && strcmp(argv[optind - 1], "--") == 0) {
		opts->has_eal_override = true;
		opts->n_eal_override = argc - optind;
		opts->eal_override = argv + optind;
	} else if (optind < argc) {
		fprintf(err, "maglevd: unexpected argument '%s' (EAL arguments "
			"go after \"--\")\n", argv[optind]);
		return MLV_E_INVAL;
	}

	if (want_help) {
		opts->mode = MLV_MODE_HELP;
		return MLV_OK;
	}
	if (want_version) {
		opts->mode = MLV_MODE_VERSION;
		return MLV_OK;
	}
	if (check) {
		opts->mode = MLV_MODE_CHECK_CONFIG;
		opts->config_path = check;
		return MLV_OK;
	}
	if (!opts->config_path) {
		opts->config_path = mlv_options_default_config;
		opts->config_is_default = true;
	}
	opts->mode = MLV_MODE_RUN;
	return MLV_OK;
}
