/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes the parser fuzzer's seed corpus: one valid frame of each kind the
 * parser distinguishes, built with tests/support/frames.c.
 * usage: fuzz_gen_corpus DIR   (files DIR/<name>.bin, overwritten) */
#include <stdio.h>
#include <string.h>

#include "tests/support/frames.h"

static int write_seed(const char *dir, const char *name,
		      const struct frame_spec *s)
{
	uint8_t buf[2048];
	char path[4096];
	uint32_t n = frame_build(buf, sizeof(buf), s, NULL, NULL);

	if (n == 0) {
		fprintf(stderr, "%s: does not fit\n", name);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.bin", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return -1;
	}
	int rc = fwrite(buf, 1, n, f) == n ? 0 : -1;
	if (fclose(f) != 0)
		rc = -1;
	if (rc)
		fprintf(stderr, "%s: write failed\n", path);
	return rc;
}

/* An ICMP error quoting the VIP's reply to the default client. */
static void icmp_error(struct frame_spec *s, uint8_t family, uint8_t *quote,
		       uint32_t cap)
{
	struct frame_spec r;

	frame_spec_init(&r, family, 6);
	uint8_t tmp[16];
	memcpy(tmp, r.src, 16);
	memcpy(r.src, r.dst, 16);
	memcpy(r.dst, tmp, 16);
	r.sport = 80;
	r.dport = 40000;
	r.payload_len = 100;
	uint32_t n = frame_build_ip(quote, cap, &r);
	frame_spec_init(s, family, family == 4 ? 1 : 58);
	memcpy(s->dst, r.src, 16);
	s->icmp_type = family == 4 ? 3 : 2;
	s->icmp_code = family == 4 ? 4 : 0;
	s->icmp_rest = 1400;
	s->payload = quote;
	s->payload_len = n < 64 ? n : 64;
}

int main(int argc, char **argv)
{
	struct frame_spec s;
	uint8_t quote[512];
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	const char *d = argv[1];

	frame_spec_init(&s, 4, 6);
	s.tcp_flags = 0x02;
	rc |= write_seed(d, "ipv4_tcp_syn", &s);
	frame_spec_init(&s, 4, 17);
	s.ip_opt_len = 8;
	s.vlan = true;
	s.payload_len = 20;
	rc |= write_seed(d, "ipv4_udp_options_vlan", &s);
	frame_spec_init(&s, 4, 17);
	s.mf = true;
	s.payload_len = 32;
	rc |= write_seed(d, "ipv4_frag_first", &s);
	s.mf = false;
	s.frag_offset = 5;
	rc |= write_seed(d, "ipv4_frag_last", &s);
	frame_spec_init(&s, 6, 6);
	s.tcp_opt_len = 12;
	rc |= write_seed(d, "ipv6_tcp", &s);
	frame_spec_init(&s, 6, 17);
	s.n_ext = 3;
	s.ext[0] = 0;
	s.ext[1] = 43;
	s.ext[2] = 60;
	s.ext_units[1] = 1;
	rc |= write_seed(d, "ipv6_udp_ext", &s);
	frame_spec_init(&s, 6, 17);
	s.v6_frag = true;
	s.mf = true;
	s.payload_len = 24;
	rc |= write_seed(d, "ipv6_frag_first", &s);
	icmp_error(&s, 4, quote, sizeof(quote));
	rc |= write_seed(d, "icmp4_frag_needed", &s);
	icmp_error(&s, 6, quote, sizeof(quote));
	rc |= write_seed(d, "icmp6_too_big", &s);
	frame_spec_init(&s, 4, 1);
	s.icmp_type = 8;
	s.payload_len = 16;
	rc |= write_seed(d, "icmp4_echo", &s);
	frame_spec_init(&s, 6, 58);
	s.icmp_type = 128;
	s.payload_len = 16;
	rc |= write_seed(d, "icmp6_echo", &s);
	return rc ? 1 : 0;
}
