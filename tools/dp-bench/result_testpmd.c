/* The testpmd side of a run: its periodic port statistics
 * (`--stats-period 1`, non-interactive), of which we take the transmit
 * rate of the port that forwards into net_null. testpmd computes each
 * Tx-pps from TSC deltas between displays, so the samples do not depend
 * on when this tool reads the log. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

#define MAX_SAMPLES 4096

struct samples {
	double v[MAX_SAMPLES];
	unsigned n;
};

/* Collect the Tx-pps values shown for port `port`, in order. */
static int read_log(const char *path, int port, struct samples *s)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int cur = -1;

	if (!f) {
		perror(path);
		return 1;
	}
	s->n = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p;

		if ((p = strstr(line, "NIC statistics for port ")))
			cur = atoi(p + strlen("NIC statistics for port "));
		else if (cur == port && (p = strstr(line, "Tx-pps:")) &&
			 s->n < MAX_SAMPLES)
			s->v[s->n++] = strtod(p + strlen("Tx-pps:"), NULL);
	}
	fclose(f);
	return 0;
}

int dpb_cmd_testpmd(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"scenario", required_argument, NULL, 's'},
		{"mode", required_argument, NULL, 'm'},
		{"log", required_argument, NULL, 'l'},
		{"skip", required_argument, NULL, 'k'},
		{"port", required_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	const char *sc = NULL, *mode = NULL, *log = NULL;
	static struct samples s;
	double sum = 0, lo = 0, hi = 0;
	int c, skip = 2, port = 1;
	unsigned used;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': sc = optarg; break;
		case 'm': mode = optarg; break;
		case 'l': log = optarg; break;
		case 'k': skip = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!sc || !mode || !log || skip < 0 || port < 0 || optind != argc) {
		fprintf(stderr, "dp-bench-result testpmd: --scenario, --mode "
			"and --log are required\n");
		return 2;
	}
	if (read_log(log, port, &s))
		return 1;
	if (s.n <= (unsigned)skip) {
		fprintf(stderr, "dp-bench-result: %s: %u Tx-pps samples for "
			"port %d, need more than %d\n", log, s.n, port, skip);
		return 1;
	}
	used = s.n - (unsigned)skip;
	lo = hi = s.v[skip];
	for (unsigned i = (unsigned)skip; i < s.n; i++) {
		sum += s.v[i];
		lo = s.v[i] < lo ? s.v[i] : lo;
		hi = s.v[i] > hi ? s.v[i] : hi;
	}
	if (sum <= 0) {
		fprintf(stderr, "dp-bench-result: %s: testpmd forwarded no "
			"packet\n", log);
		return 1;
	}
	return dpb_emit(json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:i}",
				  "tool", "testpmd", "scenario", sc,
				  "mode", mode, "mpps", sum / used / 1e6,
				  "min_mpps", lo / 1e6, "max_mpps", hi / 1e6,
				  "samples", (int)used));
}
