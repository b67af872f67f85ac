/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/bench/dp-bench/frame.h"

#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>

/* Locally administered MACs: the client side's router and the load
 * balancer. maglevd and testpmd do not filter on them. */
static const struct rte_ether_addr lb_mac = {{0x02, 0, 0, 0, 0, 0x01}};
static const struct rte_ether_addr router_mac = {{0x02, 0, 0, 0, 0, 0x02}};

static void tcp_header(struct rte_tcp_hdr *t, const struct dpb_flow *f,
		       uint8_t tcp_flags)
{
	memset(t, 0, sizeof(*t));
	t->src_port = rte_cpu_to_be_16(f->sport);
	t->dst_port = rte_cpu_to_be_16(f->dport);
	t->sent_seq = rte_cpu_to_be_32(0x10000000u + f->sport);
	t->recv_ack = rte_cpu_to_be_32(tcp_flags & RTE_TCP_ACK_FLAG ?
				       0x20000000u : 0);
	t->data_off = (uint8_t)(sizeof(*t) / 4) << 4;
	t->tcp_flags = tcp_flags;
	t->rx_win = rte_cpu_to_be_16(65535);
}

uint32_t dpb_frame_build(uint8_t *out, const struct dpb_flow *f,
			 uint32_t ip_len, uint8_t tcp_flags)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)out;
	uint8_t *l3 = out + sizeof(*eth);
	uint32_t min = dpb_min_ip_len(f->family), frame_len;
	uint32_t l3_hdr = f->family == 4 ? sizeof(struct rte_ipv4_hdr) :
					   sizeof(struct rte_ipv6_hdr);
	struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(l3 + l3_hdr);
	uint8_t *payload = (uint8_t *)(tcp + 1);

	if (ip_len < min)
		ip_len = min;
	if (ip_len > DPB_MAX_IP_LEN)
		ip_len = DPB_MAX_IP_LEN;
	frame_len = (uint32_t)sizeof(*eth) + ip_len;
	if (frame_len < DPB_MIN_FRAME)
		frame_len = DPB_MIN_FRAME;
	memset(out, 0, frame_len);

	rte_ether_addr_copy(&lb_mac, &eth->dst_addr);
	rte_ether_addr_copy(&router_mac, &eth->src_addr);
	tcp_header(tcp, f, tcp_flags);
	/* a payload that is not all zeroes, so nothing can take shortcuts */
	for (uint32_t i = 0; i < ip_len - min; i++)
		payload[i] = (uint8_t)(i * 31u + f->sport);

	if (f->family == 4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->total_length = rte_cpu_to_be_16((uint16_t)ip_len);
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_TCP;
		memcpy(&ip->src_addr, f->src, 4);
		memcpy(&ip->dst_addr, f->dst, 4);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		tcp->cksum = rte_ipv4_udptcp_cksum(ip, tcp);
	} else {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)l3;

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip->payload_len = rte_cpu_to_be_16((uint16_t)(ip_len - l3_hdr));
		ip->proto = IPPROTO_TCP;
		ip->hop_limits = 64;
		memcpy(ip->src_addr, f->src, 16);
		memcpy(ip->dst_addr, f->dst, 16);
		tcp->cksum = rte_ipv6_udptcp_cksum(ip, tcp);
	}
	return frame_len;
}
