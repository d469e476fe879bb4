/* SPDX-License-Identifier: MIT */
/*
 * Device sets: a rule for every function of a slot, for devices chosen
 * by their attributes, for a device and its IOMMU group. Each device
 * that matches becomes a member, a rule of its own with the whole
 * procedure (rule.c); a member that fails takes the whole set back,
 * since vfio refuses a group that is half bound. A set that matches
 * nothing waits as a rule whose device is missing does, and takes the
 * devices that come while it waits.
 * Calls rule.c, conf.c's rules, device.c, sysfs.c, log.c, parse.c, mem.c and
 * main.c's flag.
 */
#include <errno.h>
#include <string.h>

#include "drvbind.h"

/*
 * A look at a set's devices: the members counted, whether the set takes
 * IOMMU groups, whether it failed at its limits, and the devices beyond
 * them that a none set held all the same (over: their names, each after
 * a space).
 */
struct scan {
	struct rule *set;
	int n, group, full;
	unsigned limit;		/* the limit a none set went past: SET_MAX or DEVICES_MAX */
	char over[LINE_SZ], *end;
};

/* What a member of the set p has in its `in_set'. */
static int set_id(const struct rule *p)
{
	return (int)(p - rules) + 1;
}

/*
 * The member of the set idx after r (NULL: the first) that is still
 * the set's: a device gone for good is no longer, nor in its line.
 * NULL after the last.
 */
static struct rule *member_next(struct rule *r, int idx)
{
	for (r = r ? r + 1 : rules; r < rules + conf.nrules; r++)
		if (r->in_set == idx && !r->run.gone)
			return r;
	return NULL;
}

/*
 * Does the device match every item of the set? The first item may be a
 * pattern of ids; ATTR=PATTERN reads the attribute as udev's ATTRS{}
 * does, the device's own or else its nearest parent's (one that none
 * has matches nothing), once every item before has matched.
 * *group, whether the device matches or not: the set takes IOMMU groups.
 */
int set_match(const struct rule *p, const char *dev, int *group)
{
	char path[PATH_SZ], v[NAME_SZ], items[NAME_SZ], *i = items, *e, *val;
	int last, match = 1;

	copy(items, p->s.dev);
	*group = 0;
	for (last = 0; !last; i = e + 1) {
		for (e = i, val = NULL; *e && *e != ','; e++)
			if (*e == '=' && !val)
				val = e;
		last = !*e;
		*e = '\0';
		if (val) {
			*val++ = '\0';
			if (match && (PATH(path, "bus/", p->bus, "/devices/", dev) || parent_read(path, i, v, sizeof v) ||
			    !glob_match(val, v)))
				match = 0;
		} else if (i != items) {
			*group = 1;
		} else if (!glob_match(i, dev)) {
			match = 0;
		}
	}
	return match;
}

/*
 * A device that a none set has no room for is held all the same (fail
 * closed), by a rule of its own for one look: its hold (authorized 0,
 * driver_override none) outlasts the look, and the set makes it again
 * at every look of its own. Where the look changed the device (the
 * set's news, say_done), its name joins the set's line of them.
 */
static void member_over(struct scan *c, const char *dev)
{
	static struct rule spare;
	struct rule *p = c->set;
	size_t n = str_len(dev);

	spare = *p;
	copy(spare.s.dev, dev);
	spare.s.set = 0;
	spare.in_set = set_id(p);
	spare.spare = 1;
	spare.rep.news = 0;
	rule_arm(&spare, p->run.until);
	rule_look(&spare);
	if (spare.rep.news && spare.run.state != FAILED && c->end + n + 2 <= c->over + sizeof c->over) {
		*c->end++ = ' ';
		copy(c->end, dev);
		c->end += n;
	}
}

/*
 * A new member for dev, unless it is one already or has a rule of its
 * own, which wins. A set that would grow past its limits holds what it
 * has no room for where it is a none set (member_over); else it fails
 * whole: none of its members that still wait is moved. 1: stop.
 */
static int member_add(const char *dev, void *ctx)
{
	struct scan *c = ctx;
	struct rule *p = c->set, *r = rule_find(p->bus, dev);
	char path[PATH_SZ], cls[16];
	int idx = set_id(p);

	/* A group's bridges stay where they are, as vfio allows. */
	if (r || (c->group && node_path(path, p->bus, "/devices/", dev, "class") == 0 &&
	    attr_read(path, cls, sizeof cls) == 0 && glob_match("0x0604*", cls)))
		return 0;
	if (c->n < SET_MAX)
		r = member_new(p, idx, dev);
	if (!r && p->none) {
		c->limit = c->n == SET_MAX ? SET_MAX : DEVICES_MAX;
		member_over(c, dev);
		return 0;
	}
	if (!r) {
		say(LOG_ERR, "%r: more than %u devices", p, c->n == SET_MAX ? SET_MAX : DEVICES_MAX);
		/* A member whose device has gone is DONE, or FAILED already. */
		for (r = NULL; (r = member_next(r, idx)); )
			if (r->run.state == WAITING)
				r->run.state = FAILED;
		return c->full = 1;
	}
	/* The set says one line for them all; a member that leaves it is not missed. */
	r->rep.said = r->rep.absent_ok = 1;
	c->n++;
	return 0;
}

/* A device the set matches, and with iommu_group every device of its group. */
static int member_fn(const char *dev, void *ctx)
{
	struct scan *c = ctx;
	char p[PATH_SZ], grp[NAME_SZ];

	if (!set_match(c->set, dev, &c->group))
		return 0;
	if (!c->group)
		return member_add(dev, c);
	/* The group is read at the move: firmware and kernel may change it. */
	if (node_path(p, c->set->bus, "/devices/", dev, "iommu_group") || link_base(sys_dirfd(), p, grp) < 0 ||
	    PATH(p, "kernel/iommu_groups/", grp, "/devices") < 0 || dir_scan(p, member_add, c) < 0)
		return member_add(dev, c);
	return c->full;
}

/*
 * Takes the devices that match now as members. A set looked at again
 * (rule_arm: an add may have brought a device) starts over with its
 * members that failed, once.
 */
void set_look(struct rule *p)
{
	static struct scan c;
	struct rule *r;
	char path[PATH_SZ];
	int idx = set_id(p), group;

	c.set = p;
	c.n = c.group = c.full = 0;
	c.limit = 0;
	c.end = c.over;
	for (r = NULL; (r = member_next(r, idx)); ) {
		/*
		 * A member is a bus id. A follower may find there no device
		 * (it went: it leaves the set and its line) or another one (a
		 * stick plugged into the port another left), which is the
		 * set's only if it matches; the other devices of a group
		 * match through their group alone.
		 */
		if (!rule_there(r) || !(set_match(p, r->s.dev, &group) || group)) {
			r->run.state = DONE;
			r->run.gone = 1;
			continue;
		}
		c.n++;
		if (r->run.state == FAILED && !p->run.looked)
			rule_arm(r, p->run.until);
	}
	p->run.looked = 1;
	if (PATH(path, "bus/", p->bus, "/devices") == 0)
		(void)dir_scan(path, member_fn, &c);
	if (c.end > c.over)
		say(LOG_WARNING, "%r: more than %u devices; %s all the same:%s", p, c.limit, flag[DRY] ? "would hold" : "held",
		    c.over);
}

/*
 * The set's one line: its members, and where they are now; a line of
 * LINE_SZ at most, as say() makes it. A none set that failed names the
 * members it still holds: a failure of one never lets the others go.
 */
static void set_say(struct rule *p, int idx, int failed)
{
	char devs[LINE_SZ], *end = devs;
	struct rule *r;
	size_t n;

	*end = '\0';
	for (r = NULL; (r = member_next(r, idx)); ) {
		n = str_len(r->s.dev);
		if (failed && p->none && r->run.state != DONE)
			continue;
		if (end + n + 2 > devs + sizeof devs)
			break;
		*end++ = ' ';
		copy(end, r->s.dev);
		end += n;
	}
	if (failed)
		say(LOG_ERR, "%r: set failed; %s:%s", p, p->none ? "still held" : "as before", devs);
	else
		say(LOG_INFO, "%r: %s%s on %s", p, flag[DRY] ? "would put" : "", devs + !flag[DRY], p->s.drv);
	p->rep.said = 1;
}

/*
 * Once no member waits (`now' past the deadline: none does), or one
 * failed: the set's one line; where a member failed, every member back
 * where it was first, but in a none set, which fails closed: there each
 * member goes its own way, and those held stay held. A set that has
 * settled and said so looks again only where a member has news.
 * Returns whether the set has a member: without one it waits as a rule
 * for a missing device does.
 */
int set_settle(struct rule *p, long long now)
{
	struct rule *r;
	int n = 0, waiting = 0, failed = 0, news = 0, idx = set_id(p);

	for (r = NULL; (r = member_next(r, idx)); ) {
		n++;
		news |= r->rep.news;
	}
	if (p->run.state != WAITING && p->rep.said && !news)
		return 1;
	for (r = NULL; (r = member_next(r, idx)); ) {
		/* Its members' deadline is the set's: they have had their last look. */
		if (r->run.state == WAITING && now >= r->run.until)
			rule_expire(r);
		waiting |= r->run.state == WAITING;
		failed |= r->run.state == FAILED;
	}
	if (!n)
		return 0;
	if (waiting && (!failed || p->none))
		return 1;
	p->run.state = failed ? FAILED : DONE;
	/*
	 * Undone before the line starts: what the rollback says (-v) goes
	 * on lines of its own. One that has not been moved or held has
	 * nothing to undo.
	 */
	for (r = rules; failed && !p->none && r < rules + conf.nrules; r++)
		if (r->in_set == idx && !r->run.gone && (r->run.state == DONE || r->run.held))
			rule_undo(r);
		else if (r->in_set == idx)
			r->run.state = FAILED;
	/* Said at the first look, and where a member has news (say_done). */
	if (!failed && p->rep.said && !news)
		return 1;
	for (r = NULL; (r = member_next(r, idx)); )
		r->rep.news = 0;
	set_say(p, idx, failed);
	return 1;
}
