/* SPDX-License-Identifier: BSD-3-Clause */
/* What every dp-bench-result subcommand shares (result.h): printing a
 * record, reading a number from a JSON document, the options of a
 * window between two snapshots. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/dp-bench/result.h"

int dpb_emit(json_t *rec)
{
	char *s;

	if (!rec) {
		fprintf(stderr, "dp-bench-result: out of memory\n");
		return 1;
	}
	s = json_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII |
			   JSON_REAL_PRECISION(6));
	json_decref(rec);
	if (!s) {
		fprintf(stderr, "dp-bench-result: out of memory\n");
		return 1;
	}
	puts(s);
	free(s);
	return fflush(stdout) == 0 ? 0 : 1;
}

int dpb_json_number(const json_t *doc, const char *path, double *out)
{
	char buf[256];
	const json_t *cur = doc;
	char *save = NULL, *tok;

	if (strlen(path) >= sizeof(buf))
		return -1;
	strcpy(buf, path);
	for (tok = strtok_r(buf, ".", &save); tok && cur;
	     tok = strtok_r(NULL, ".", &save))
		cur = json_object_get(cur, tok);
	if (!cur || !json_is_number(cur))
		return -1;
	*out = json_number_value(cur);
	return 0;
}

int dpb_window_args(int argc, char **argv, const char *cmd,
		    struct dpb_window_args *out)
{
	static const struct option longopts[] = {
		{"scenario", required_argument, NULL, 's'},
		{"before", required_argument, NULL, 'a'},
		{"after", required_argument, NULL, 'b'},
		{"tsc-hz", required_argument, NULL, 't'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	*out = (struct dpb_window_args){ 0 };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': out->scenario = optarg; break;
		case 'a': out->before = optarg; break;
		case 'b': out->after = optarg; break;
		case 't':
			errno = 0;
			out->tsc_hz = strtod(optarg, &end);
			if (errno || *end || out->tsc_hz < 0) {
				fprintf(stderr, "dp-bench-result %s: bad "
					"--tsc-hz %s\n", cmd, optarg);
				return 2;
			}
			break;
		default: return 2;
		}
	}
	if (!out->scenario || !out->before || !out->after || optind != argc) {
		fprintf(stderr, "dp-bench-result %s: --scenario, --before "
			"and --after are required\n", cmd);
		return 2;
	}
	return 0;
}
