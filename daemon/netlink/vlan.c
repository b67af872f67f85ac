/* SPDX-License-Identifier: BSD-3-Clause */
/* A VLAN port's kernel interface: see vlan.h. */
#include "daemon/netlink/vlan.h"

#include <errno.h>
#include <string.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "daemon/netlink/msg_internal.h"
#include "daemon/netlink/transact_internal.h"

struct link_attrs {
	int parent;             /* IFLA_LINK; 0: none */
	bool vlan;              /* IFLA_INFO_KIND "vlan" */
	bool have_vid;
	uint16_t vid;
};

static int vlan_data_attr(const struct nlattr *a, void *data)
{
	struct link_attrs *l = data;

	if (mnl_attr_get_type(a) == IFLA_VLAN_ID &&
	    mnl_attr_validate(a, MNL_TYPE_U16) >= 0) {
		l->vid = mnl_attr_get_u16(a);
		l->have_vid = true;
	}
	return MNL_CB_OK;
}

static int info_attr(const struct nlattr *a, void *data)
{
	struct link_attrs *l = data;

	switch (mnl_attr_get_type(a)) {
	case IFLA_INFO_KIND:
		l->vlan = mnl_attr_validate(a, MNL_TYPE_STRING) >= 0 &&
			  strcmp(mnl_attr_get_str(a), "vlan") == 0;
		break;
	case IFLA_INFO_DATA:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) >= 0)
			(void)mnl_attr_parse_nested(a, vlan_data_attr, l);
		break;
	}
	return MNL_CB_OK;
}

static int link_attr(const struct nlattr *a, void *data)
{
	struct link_attrs *l = data;

	switch (mnl_attr_get_type(a)) {
	case IFLA_LINK:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			l->parent = (int)mnl_attr_get_u32(a);
		break;
	case IFLA_LINKINFO:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) >= 0)
			(void)mnl_attr_parse_nested(a, info_attr, l);
		break;
	}
	return MNL_CB_OK;
}

bool mlv_nl_link_vlan(const struct nlmsghdr *nlh, int *ifindex, int *parent,
		      uint16_t *vid)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct link_attrs l = { 0 };

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    !mlv_nl_has_header(nlh, sizeof(*ifi)) ||
	    mlv_nl_attr_parse(nlh, sizeof(*ifi), link_attr, &l) == MNL_CB_ERROR)
		return false;
	if (!l.vlan || !l.have_vid || l.parent <= 0 || ifi->ifi_index <= 0)
		return false;
	*ifindex = ifi->ifi_index;
	*parent = l.parent;
	*vid = l.vid;
	return true;
}

struct vlan_search {
	int parent;
	uint16_t vid;
	int child;
};

static int on_link(const struct nlmsghdr *nlh, void *data)
{
	struct vlan_search *s = data;
	int ifindex, parent;
	uint16_t vid;

	if (mlv_nl_link_vlan(nlh, &ifindex, &parent, &vid) &&
	    parent == s->parent && vid == s->vid && s->child == 0)
		s->child = ifindex;
	return MNL_CB_OK;
}

enum mlv_err mlv_rtnl_vlan_child(struct mlv_rtnl *nl, int parent, uint16_t vid,
				 int *child)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct vlan_search s = { .parent = parent, .vid = vid };
	struct ifinfomsg *ifi;
	int err;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	err = mlv_nl_transact(nl->req, nl->req_portid, &nl->seq, nlh, on_link, &s);
	if (err) {
		errno = err;
		return MLV_E_IO;
	}
	if (s.child == 0)
		return MLV_E_NOT_FOUND;
	*child = s.child;
	return MLV_OK;
}
