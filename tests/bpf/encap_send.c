/* SPDX-License-Identifier: BSD-3-Clause */
/* encap_send: send one UDP datagram wrapped the way maglevd wraps it
 * (dataplane/packet/encap.c: IPIP or GUE, IPv4 or IPv6 outer) as a raw Ethernet
 * frame on an interface, for the decapsulation integration test. Only
 * for addresses inside the test's own namespaces.
 *
 *   encap_send IFNAME DST_MAC ipip|gue OUTER_SRC OUTER_DST INNER_SRC
 *              INNER_DST DPORT PAYLOAD [GUE_PORT]
 *
 * The source MAC is IFNAME's. Exit 0 sent, 1 failed, 2 bad usage. */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/base/addr.h"
#include "dataplane/packet/encap.h"
#include "tests/support/frames.h"

static int usage(void)
{
	fprintf(stderr, "usage: encap_send IFNAME DST_MAC ipip|gue OUTER_SRC "
		"OUTER_DST INNER_SRC INNER_DST DPORT PAYLOAD [GUE_PORT]\n");
	return 2;
}

static int family_of(const char *text, uint8_t out[16])
{
	struct mlv_ip ip;

	if (!mlv_ip_parse(text, &ip))
		return 0;
	memcpy(out, ip.bytes, 16);
	return ip.family;
}

int main(int argc, char **argv)
{
	static uint8_t frame[4096];
	struct mlv_encap_params p = { 0 };
	struct mlv_encap_tmpl t;
	struct frame_spec s;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct mlv_mac dst_mac;
	struct ifreq ifr;
	uint8_t inner_src[16], inner_dst[16];
	int inner_family, fd, rc = 1;
	uint32_t ilen;
	long dport, gue_port = 6080;

	if (argc != 10 && argc != 11)
		return usage();
	if (!mlv_mac_parse(argv[2], &dst_mac))
		return usage();
	if (!strcmp(argv[3], "ipip"))
		p.method = MLV_ENCAP_IPIP;
	else if (!strcmp(argv[3], "gue"))
		p.method = MLV_ENCAP_GUE;
	else
		return usage();
	p.outer_family = (uint8_t)family_of(argv[4], p.outer_src);
	if (!p.outer_family || family_of(argv[5], p.outer_dst) != p.outer_family)
		return usage();
	inner_family = family_of(argv[6], inner_src);
	if (!inner_family || family_of(argv[7], inner_dst) != inner_family)
		return usage();
	dport = strtol(argv[8], NULL, 10);
	if (argc == 11)
		gue_port = strtol(argv[10], NULL, 10);
	if (dport < 1 || dport > 65535 || gue_port < 1 || gue_port > 65535)
		return usage();

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("encap_send: socket(AF_PACKET)");
		return 1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[1]);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		fprintf(stderr, "encap_send: %s: %s\n", argv[1],
			strerror(errno));
		goto out;
	}
	memcpy(p.src_mac, ifr.ifr_hwaddr.sa_data, 6);
	memcpy(p.dst_mac, dst_mac.bytes, 6);
	p.inner_family = (uint8_t)inner_family;
	p.gue_port = (uint16_t)gue_port;
	if (mlv_encap_tmpl_init(&t, &p)) {
		fprintf(stderr, "encap_send: %s cannot carry IPv%d in IPv%d\n",
			argv[3], inner_family, p.outer_family);
		goto out;
	}

	frame_spec_init(&s, (uint8_t)inner_family, IPPROTO_UDP);
	memcpy(s.src, inner_src, 16);
	memcpy(s.dst, inner_dst, 16);
	s.dport = (uint16_t)dport;
	s.payload = (const uint8_t *)argv[9];
	s.payload_len = (uint32_t)strlen(argv[9]);
	ilen = frame_build_ip(frame + t.len, sizeof(frame) - t.len, &s);
	if (!ilen) {
		fprintf(stderr, "encap_send: payload too long\n");
		goto out;
	}
	mlv_encap_apply(frame, &t, (uint16_t)ilen, s.tos, 0x1234567);

	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, dst_mac.bytes, 6);
	if (sendto(fd, frame, t.len + ilen, 0, (struct sockaddr *)&sll,
		   sizeof(sll)) != (ssize_t)(t.len + ilen)) {
		fprintf(stderr, "encap_send: sendto: %s\n", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}
