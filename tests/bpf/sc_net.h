/* SPDX-License-Identifier: BSD-3-Clause */
/* The second-chance BPF tests' network (test_second_chance.c,
 * test_second_chance_interop.c): a veth pair sc0/sc1 in the test's own
 * namespace, hop A reached through sc0 (the receiving device) and hop B
 * through sc1, each with a permanent neighbour entry, forwarding on (the
 * route look-up of a forwarded packet needs it); and the checksums the
 * tests redo from scratch on expected frames. Include after <cmocka.h>
 * and tests/support/frames.h. */
#ifndef MLV_TESTS_BPF_SC_NET_H
#define MLV_TESTS_BPF_SC_NET_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC0_MAC "02:00:00:00:77:01"
#define SC1_MAC "02:00:00:00:78:01"
#define HOP_A_MAC "02:00:00:00:77:02"
#define HOP_B_MAC "02:00:00:00:78:02"
static const uint8_t sc0_mac[6] = { 2, 0, 0, 0, 0x77, 1 };
static const uint8_t sc1_mac[6] = { 2, 0, 0, 0, 0x78, 1 };
static const uint8_t hop_a_mac[6] = { 2, 0, 0, 0, 0x77, 2 };
static const uint8_t hop_b_mac[6] = { 2, 0, 0, 0, 0x78, 2 };
#define HOP_A4 "10.77.0.2"
#define HOP_B4 "10.78.0.2"
#define HOP_A6 "fd00:77::2"
#define HOP_B6 "fd00:78::2"

static inline void sh(const char *cmd)
{
	if (system(cmd) != 0) {
		fprintf(stderr, "setup command failed: %s\n", cmd);
		abort();
	}
}

static inline void write_sysctl(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(value, f) < 0 || fclose(f)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		abort();
	}
}

/* The veth pair, its networks, the hops' neighbours, forwarding. */
static inline void sc_net_make(void)
{
	sh("ip link set lo up");
	sh("ip link add sc0 address " SC0_MAC " type veth peer name sc1 "
	   "address " SC1_MAC);
	/* a quiet link: no link-local address (so no DAD, no router
	 * solicitation) and MLD's unsolicited reports 1 ms apart, so that no
	 * frame the kernel sends by itself reaches the programs, and moves
	 * their counters, once the tests run */
	sh("for d in sc0 sc1; do for k in addr_gen_mode=1 accept_dad=0 "
	   "router_solicitations=0 mldv1_unsolicited_report_interval=1 "
	   "mldv2_unsolicited_report_interval=1; do "
	   "sysctl -qw net.ipv6.conf.$d.$k || exit 1; done; done");
	sh("ip link set sc0 up && ip link set sc1 up");
	sh("ip addr add 10.77.0.1/24 dev sc0 && "
	   "ip addr add fd00:77::1/64 dev sc0 nodad && "
	   "ip addr add 10.78.0.1/24 dev sc1 && "
	   "ip addr add fd00:78::1/64 dev sc1 nodad");
	sh("ip neigh add " HOP_A4 " lladdr " HOP_A_MAC " dev sc0 nud permanent && "
	   "ip neigh add " HOP_A6 " lladdr " HOP_A_MAC " dev sc0 nud permanent && "
	   "ip neigh add " HOP_B4 " lladdr " HOP_B_MAC " dev sc1 nud permanent && "
	   "ip neigh add " HOP_B6 " lladdr " HOP_B_MAC " dev sc1 nud permanent");
	write_sysctl("/proc/sys/net/ipv4/conf/all/forwarding", "1");
	write_sysctl("/proc/sys/net/ipv6/conf/all/forwarding", "1");
}

/* The IPv4 header checksum of ip, redone. */
static inline void ipv4_csum_fill(uint8_t *ip)
{
	uint16_t c;

	ip[10] = ip[11] = 0;
	c = frame_csum(ip, 20, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
}

/* The UDP checksum after the IP header at ip (IPv4 without options or
 * IPv6), redone; 0 is sent as 0xffff. */
static inline void udp_csum_fill(uint8_t *ip)
{
	uint8_t family = ip[0] >> 4;
	uint8_t *udp = ip + (family == 4 ? 20 : 40);
	uint32_t l4_len = (uint32_t)(udp[4] << 8 | udp[5]);
	uint16_t c;

	udp[6] = udp[7] = 0;
	c = frame_csum(udp, l4_len,
		       frame_pseudo_sum(family, ip + (family == 4 ? 12 : 8),
					ip + (family == 4 ? 16 : 24), 17,
					l4_len));
	if (c == 0)
		c = 0xffff;
	udp[6] = (uint8_t)(c >> 8);
	udp[7] = (uint8_t)c;
}

#endif
