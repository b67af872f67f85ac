/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/packet/config_yaml.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "control/tables/builder.h"

static const char *fwd_name(enum sc_fwd f)
{
	switch (f) {
	case SC_FWD_IPIP:  return "ipip";
	case SC_FWD_GUE:   return "gue";
	case SC_FWD_L2DSR: return "l2dsr";
	}
	return "?";
}

static const char *addr_text(uint8_t family, const uint8_t *a, char *buf,
			     size_t len)
{
	return inet_ntop(family == 4 ? AF_INET : AF_INET6, a, buf,
			 (socklen_t)len);
}

static void mac_text(const uint8_t *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
}

/* The VIP's source ACL as its allow and deny lists, one prefix a line. */
static void write_acl(FILE *f, const struct sc_vip *v)
{
	char a[INET6_ADDRSTRLEN];

	for (int allow = 1; allow >= 0; allow--) {
		bool any = false;

		for (uint32_t i = 0; i < v->n_acl; i++) {
			const struct sc_acl_rule *r = &v->acl[i];

			if (r->allow != (allow == 1))
				continue;
			if (!any)
				fprintf(f, "    %s:\n", allow ? "allow" : "deny");
			any = true;
			fprintf(f, "      - \"%s/%u\"\n",
				addr_text(v->family, r->addr, a, sizeof(a)), r->len);
		}
	}
}

static void write_vip(FILE *f, const struct sc_vip *v)
{
	char a[INET6_ADDRSTRLEN], m[18];

	fprintf(f, "  - name: %s\n", v->name);
	fprintf(f, "    address: \"%s\"\n", addr_text(v->family, v->addr, a, sizeof(a)));
	if (v->port == 0 && v->port_last == 65535)
		fprintf(f, "    port: any\n");
	else if (v->port_last)
		fprintf(f, "    port: %u-%u\n", v->port, v->port_last);
	else
		fprintf(f, "    port: %u\n", v->port);
	if (v->hash)
		fprintf(f, "    hash: %s\n", v->hash == 1 ? "3tuple" : "source");
	if (v->prefix6)
		fprintf(f, "    source_prefix6: %u\n", v->prefix6);
	fprintf(f, "    protocol: %s\n", v->proto == 6 ? "tcp" : "udp");
	fprintf(f, "    forwarding: %s\n", fwd_name(v->fwd));
	if (v->fwd == SC_FWD_GUE)
		fprintf(f, "    gue_port: %u\n", v->gue_port);
	fprintf(f, "    table_size: %u\n", v->table_size);
	if (v->table != MLV_TABLE_MAGLEV)
		fprintf(f, "    table: %s\n",
			mlv_table_kind_name((enum mlv_table_kind)v->table));
	if (v->table == MLV_TABLE_RING && v->vnodes)
		fprintf(f, "    vnodes: %u\n", v->vnodes);
	if (v->max_load > 0)
		fprintf(f, "    max_load: %.6f\n", v->max_load);
	if (v->echo_reply)
		fprintf(f, "    icmp_echo: reply\n");
	if (v->new_flows_per_second)
		fprintf(f, "    new_flows_per_second: %u\n",
			v->new_flows_per_second);
	if (v->new_flows_burst)
		fprintf(f, "    new_flows_burst: %u\n", v->new_flows_burst);
	if (v->quic)
		fprintf(f, "    quic: true\n");
	if (v->mss_clamp)
		fprintf(f, "    mss_clamp: %s\n", v->mss_clamp);
	if (v->second_chance)
		fprintf(f, "    second_chance: {enabled: true}\n");
	if (v->ipip_source)
		fprintf(f, "    ipip_source: %s\n", v->ipip_source);
	if (v->ipip_source6)
		fprintf(f, "    ipip_source6: \"%s\"\n", v->ipip_source6);
	write_acl(f, v);
	fprintf(f, "    backends:\n");
	for (uint32_t i = 0; i < v->n_backends; i++) {
		const struct sc_backend *b = &v->backends[i];

		fprintf(f, "      - {name: %s, address: \"%s\", weight: %u",
			b->name, addr_text(b->family, b->addr, a, sizeof(a)),
			b->weight);
		if (b->drain)
			fprintf(f, ", state: drain");
		if (b->down)
			fprintf(f, ", state: down");
		if (b->quic_server_id)
			fprintf(f, ", quic_server_id: %u", b->quic_server_id);
		if (b->has_mac) {
			mac_text(b->mac, m, sizeof(m));
			fprintf(f, ", mac: \"%s\"", m);
		}
		fprintf(f, "}\n");
	}
}

int sc_write_config(const struct scenario *sc, bool alt,
		    const struct sc_config_paths *paths, const char *path)
{
	const struct sc_vip *vips = alt ? sc->alt_vips : sc->vips;
	uint32_t n = alt ? sc->n_alt_vips : sc->n_vips;
	char tmp[4096], a4[INET6_ADDRSTRLEN], a6[INET6_ADDRSTRLEN], nh[18];
	FILE *f;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		fprintf(stderr, "config path too long: %s\n", path);
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "cannot write %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	addr_text(4, sc->port.addr4, a4, sizeof(a4));
	addr_text(6, sc->port.addr6, a6, sizeof(a6));
	mac_text(sc->port.next_hop, nh, sizeof(nh));

	fprintf(f, "# packet test scenario %s%s: %s\n", sc->name,
		alt ? " (config B)" : "", sc->summary);
	fprintf(f, "dataplane:\n");
	fprintf(f, "  eal_args: [--in-memory, --no-pci, "
		   "\"--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s\"]\n",
		paths->rx_pcap, paths->tx_pcap);
	fprintf(f, "  workers: 1\n");
	fprintf(f, "  idle: adaptive\n");
	fprintf(f, "  ports:\n");
	fprintf(f, "    - name: p0\n");
	fprintf(f, "      device: net_pcap0\n");
	fprintf(f, "      address: \"%s\"\n", a4);
	fprintf(f, "      address6: \"%s\"\n", a6);
	fprintf(f, "      next_hop: \"%s\"\n", nh);
	fprintf(f, "      mtu: %u\n", sc->port.mtu);
	if (sc->port.vlan)
		fprintf(f, "      vlan: %u\n", sc->port.vlan);
	if (sc->port.tx_vlan) {
		/* the backends' VLAN of the same device, and p0's tx_port */
		fprintf(f, "      tx_port: p1\n");
		fprintf(f, "    - name: p1\n");
		fprintf(f, "      device: net_pcap0\n");
		fprintf(f, "      address: \"%s\"\n", a4);
		fprintf(f, "      address6: \"%s\"\n", a6);
		fprintf(f, "      next_hop: \"%s\"\n", nh);
		fprintf(f, "      mtu: %u\n", sc->port.mtu);
		fprintf(f, "      vlan: %u\n", sc->port.tx_vlan);
	}
	fprintf(f, "  conntrack:\n");
	fprintf(f, "    entries_per_worker: %u\n", sc->ct_entries);
	fprintf(f, "control:\n");
	fprintf(f, "  socket: \"%s\"\n", paths->socket);
	fprintf(f, "  metrics_listen: \"\"\n");
	fprintf(f, "defaults:\n");
	fprintf(f, "  health: {type: none}\n");
	fprintf(f, "vips:\n");
	for (uint32_t i = 0; i < n; i++)
		write_vip(f, &vips[i]);

	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "cannot write %s\n", tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		fprintf(stderr, "cannot rename %s to %s: %s\n", tmp, path,
			strerror(errno));
		return -1;
	}
	return 0;
}
