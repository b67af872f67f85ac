/* SPDX-License-Identifier: BSD-3-Clause OR GPL-2.0-only */
/* SYN-ACK MSS clamping on the backend (docs/forwarding.md, "MSS
 * clamping"), the half the load balancer cannot do: in direct server
 * return the backend's SYN-ACK goes straight to the client, so the MSS
 * the client sends with, and so the size of the packets the load
 * balancer must encapsulate, is whatever the backend offers.
 *
 * The XDP decapsulator records every TCP SYN it decapsulates
 * (mlv_synack_record) in decap_syn_mss: the flow, client -> VIP, and the
 * MSS that fits the tunnel that carried it, path MTU - the outer headers
 * it stripped - the inner IP and TCP headers. The tc egress program
 * (mlv_tc_synack) lowers the MSS option of a SYN-ACK leaving for a
 * recorded flow to that value. Flows that did not come through a load
 * balancer's tunnel (SSH, health checks) are not in the map and are
 * never touched.
 *
 * The entry outlives the SYN-ACK: a SYN-ACK the backend retransmits on
 * its timer (the first one lost) must be clamped too, and no packet of
 * the handshake tells this program when the client has the SYN-ACK. The
 * map is an LRU, so entries of finished handshakes give way to new ones;
 * a new SYN of the same flow rewrites its entry.
 *
 * Included by xdp_decap.bpf.c: both programs live in one object so they
 * share the maps. */
#ifndef MLV_BPF_DECAP_SYNACK_H
#define MLV_BPF_DECAP_SYNACK_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "dataplane/bpf/decap/maps.h"
#include "dataplane/bpf/common/parse.h"

/* The fixed inner headers an MSS leaves out (RFC 879, RFC 6691): IPv4 +
 * TCP, IPv6 + TCP, without options. */
#define MLV_SYNACK_HDRS_V4 40
#define MLV_SYNACK_HDRS_V6 60
/* TCP option kinds and the MSS option's length (RFC 9293 3.2). */
#define MLV_TCPOPT_EOL 0
#define MLV_TCPOPT_NOP 1
#define MLV_TCPOPT_MSS 2
#define MLV_TCPOLEN_MSS 4
/* The most option bytes a TCP header has (data offset 15 words). */
#define MLV_TCP_MAX_OPTLEN 40
/* The stack copy of the options: a power of two over MLV_TCP_MAX_OPTLEN,
 * so an index masked with it is inside the buffer for the verifier. */
#define MLV_SYNACK_OPTBUF 64

/* c->pos: the inner IP packet of a tunnel that is being decapsulated,
 * outer_len bytes of outer headers after Ethernet. If it is a TCP SYN
 * (SYN without ACK) and clamping is on, remember its flow and the MSS
 * that fits. Inner fragments, IPv6 extension headers and packets too
 * short for a TCP header are not recorded (their SYN-ACK passes as it
 * is). */
static __always_inline void mlv_synack_record(const struct mlv_cursor *c,
					      __u8 inner_proto,
					      __u32 outer_len)
{
	struct mlv_decap_flow_key key = {};
	struct mlv_decap_flow_val val = {};
	struct mlv_decap_mss_cfg *cfg;
	struct tcphdr *tcp;
	__u32 zero = 0, hdrs;

	if (inner_proto == MLV_PROTO_IPIP) {
		struct iphdr *ip = c->pos;

		if ((void *)(ip + 1) > c->end || ip->protocol != IPPROTO_TCP ||
		    ip->ihl < 5 ||
		    (ip->frag_off & bpf_htons(MLV_IP_MF | MLV_IP_OFFSET)))
			return;
		tcp = (void *)ip + ip->ihl * 4;
		key.family = MLV_BPF_FAMILY_V4;
		__builtin_memcpy(key.saddr, &ip->saddr, 4);
		__builtin_memcpy(key.daddr, &ip->daddr, 4);
		hdrs = MLV_SYNACK_HDRS_V4;
	} else {
		struct ipv6hdr *ip6 = c->pos;

		if ((void *)(ip6 + 1) > c->end || ip6->nexthdr != IPPROTO_TCP)
			return;
		tcp = (void *)(ip6 + 1);
		key.family = MLV_BPF_FAMILY_V6;
		__builtin_memcpy(key.saddr, &ip6->saddr, 16);
		__builtin_memcpy(key.daddr, &ip6->daddr, 16);
		hdrs = MLV_SYNACK_HDRS_V6;
	}
	if ((void *)(tcp + 1) > c->end || !tcp->syn || tcp->ack)
		return;
	/* only SYNs get this far: other packets pay no map lookup */
	cfg = bpf_map_lookup_elem(&decap_mss_cfg, &zero);
	if (!cfg || !cfg->path_mtu || cfg->path_mtu <= outer_len + hdrs)
		return;
	key.proto = IPPROTO_TCP;
	key.sport = tcp->source;
	key.dport = tcp->dest;
	val.mss = cfg->path_mtu - outer_len - hdrs;
	if (bpf_map_update_elem(&decap_syn_mss, &key, &val, BPF_ANY) == 0)
		decap_count(MLV_DECAP_CTR_SYN_RECORDED);
}

/* The state of the option walk (find_mss_step, one option per call). */
struct mss_walk {
	__u8 opts[MLV_SYNACK_OPTBUF];  /* the options, zero past len */
	__u32 len;                     /* option bytes, at most 40 */
	__u32 off;                     /* the next option's offset */
	int at;                        /* the result, see find_mss */
};

static __always_inline __u8 opt_byte(const __u8 *opts, __u32 off)
{
	/* keeps the index inside the buffer for the verifier */
	return opts[off & (MLV_SYNACK_OPTBUF - 1)];
}

/* bpf_loop callback: look at the option at w->off; 1 ends the walk with
 * w->at set. One call per option, verified once rather than per
 * iteration (an open-coded loop over variable option lengths makes the
 * verifier's states explode). */
static long find_mss_step(__u64 index, void *ctx)
{
	struct mss_walk *w = ctx;
	__u32 off = w->off;
	__u8 kind, olen;

	(void)index;
	if (off >= w->len || off >= MLV_TCP_MAX_OPTLEN)
		return 1;                 /* at stays -1: no MSS option */
	kind = opt_byte(w->opts, off);
	if (kind == MLV_TCPOPT_EOL)
		return 1;
	if (kind == MLV_TCPOPT_NOP) {
		w->off = off + 1;
		return 0;
	}
	if (off + 1 >= w->len) {
		w->at = -2;
		return 1;
	}
	olen = opt_byte(w->opts, off + 1);
	if (olen < 2 || off + olen > w->len) {
		w->at = -2;
		return 1;
	}
	if (kind == MLV_TCPOPT_MSS) {
		w->at = olen == MLV_TCPOLEN_MSS ? (int)off + 2 : -2;
		return 1;
	}
	w->off = off + olen;
	return 0;
}

/* Where the MSS option's value sits in w->opts[0..w->len): its offset,
 * or -1 when there is none, -2 when the options do not parse (an option
 * running past the header, a length under 2, an MSS option whose length
 * is not 4). Every step moves at least one byte, so MLV_TCP_MAX_OPTLEN
 * steps see every option. */
static __always_inline int find_mss(struct mss_walk *w)
{
	w->off = 0;
	w->at = -1;
	if (bpf_loop(MLV_TCP_MAX_OPTLEN, find_mss_step, w, 0) < 0)
		return -2;
	return w->at;
}

/* Egress of the interface the decapsulator is attached to: a TCP SYN-ACK
 * of a recorded flow whose MSS option is larger than the recorded MSS
 * gets the recorded MSS. Every packet continues (TC_ACT_OK); only those
 * bytes and the TCP checksum change.
 *
 * The checksum: bpf_l4_csum_replace without BPF_F_PSEUDO_HDR updates it
 * incrementally (RFC 1624) when it is complete, and leaves it alone when
 * the packet is CHECKSUM_PARTIAL (the usual case for a locally sent
 * SYN-ACK: the field holds the pseudo-header sum only, and the device or
 * skb_checksum_help sums the bytes, the new MSS included, later). The
 * options are read with bpf_skb_load_bytes, so a header outside the
 * linear part of the skb is read the same way. */
SEC("tc")
int mlv_tc_synack(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct mlv_decap_flow_key key = {};
	struct mlv_decap_flow_val *rec;
	struct mss_walk walk = {};
	struct ethhdr *eth = data;
	__u32 l4_off, optlen;
	struct tcphdr *tcp;
	__be16 old_be, new_be;
	__u16 old_raw, new_raw;
	int at;

	if ((void *)(eth + 1) > end)
		return TC_ACT_OK;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_TCP ||
		    ip->ihl < 5 ||
		    (ip->frag_off & bpf_htons(MLV_IP_MF | MLV_IP_OFFSET)))
			return TC_ACT_OK;
		l4_off = ETH_HLEN + ip->ihl * 4;
		key.family = MLV_BPF_FAMILY_V4;
		__builtin_memcpy(key.saddr, &ip->daddr, 4);
		__builtin_memcpy(key.daddr, &ip->saddr, 4);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_TCP)
			return TC_ACT_OK;
		l4_off = ETH_HLEN + sizeof(*ip6);
		key.family = MLV_BPF_FAMILY_V6;
		__builtin_memcpy(key.saddr, &ip6->daddr, 16);
		__builtin_memcpy(key.daddr, &ip6->saddr, 16);
	} else {
		return TC_ACT_OK;
	}
	tcp = data + l4_off;
	if ((void *)(tcp + 1) > end || !tcp->syn || !tcp->ack)
		return TC_ACT_OK;
	key.proto = IPPROTO_TCP;
	key.sport = tcp->dest;
	key.dport = tcp->source;
	rec = bpf_map_lookup_elem(&decap_syn_mss, &key);
	if (!rec) {
		decap_count(MLV_DECAP_CTR_SYNACK_UNKNOWN);
		return TC_ACT_OK;
	}
	if (tcp->doff < 5) {
		decap_count(MLV_DECAP_CTR_SYNACK_MALFORMED);
		return TC_ACT_OK;
	}
	optlen = tcp->doff * 4 - sizeof(*tcp);
	if (optlen == 0) {
		decap_count(MLV_DECAP_CTR_SYNACK_FITS);
		return TC_ACT_OK;
	}
	if (optlen > MLV_TCP_MAX_OPTLEN ||
	    bpf_skb_load_bytes(skb, l4_off + sizeof(*tcp), walk.opts,
			       optlen)) {
		decap_count(MLV_DECAP_CTR_SYNACK_MALFORMED);
		return TC_ACT_OK;
	}
	walk.len = optlen;
	at = find_mss(&walk);
	if (at == -2) {
		decap_count(MLV_DECAP_CTR_SYNACK_MALFORMED);
		return TC_ACT_OK;
	}
	if (at < 0 || at > MLV_TCP_MAX_OPTLEN - 2) {
		decap_count(MLV_DECAP_CTR_SYNACK_FITS);
		return TC_ACT_OK;
	}
	old_be = bpf_htons((__u16)(opt_byte(walk.opts, at) << 8 |
				   opt_byte(walk.opts, at + 1)));
	if (bpf_ntohs(old_be) <= rec->mss) {
		decap_count(MLV_DECAP_CTR_SYNACK_FITS);
		return TC_ACT_OK;
	}
	new_be = bpf_htons((__u16)rec->mss);
	if (bpf_skb_store_bytes(skb, l4_off + sizeof(*tcp) + at, &new_be, 2,
				0))
		return TC_ACT_OK;
	/* The checksum sums 16-bit words from the TCP header's start. The
	 * option is where the options put it: at an odd offset its two
	 * bytes are the low half of one word and the high half of the
	 * next, which sums like the byte-swapped value at an even one. */
	old_raw = (__u16)old_be;
	new_raw = (__u16)new_be;
	if (at & 1) {
		old_raw = __builtin_bswap16(old_raw);
		new_raw = __builtin_bswap16(new_raw);
	}
	bpf_l4_csum_replace(skb, l4_off + offsetof(struct tcphdr, check),
			    old_raw, new_raw, sizeof(__u16));
	decap_count(MLV_DECAP_CTR_SYNACK_CLAMPED);
	return TC_ACT_OK;
}

#endif
