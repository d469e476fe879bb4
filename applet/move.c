/* SPDX-License-Identifier: MIT */
/*
 * The mechanics of a move, steps 3 to 7 of drvbind(8) as rule.c decides
 * them: unbind, bind (match_busid first for usbip-host, new_id where the
 * driver does not know the device), verify the driver link, and the
 * rollback. They act on the look's device, and record in the rule's
 * run what they changed (match_busid written, the id taught) so that
 * the rollback can undo it; what the rule has come to is rule.c's.
 * Calls device.c, sysfs.c, log.c and mem.c.
 */
#include <errno.h>
#include <string.h>

#include "drvbind.h"

enum { BUSY_RETRIES = 3 };

const char *hold_name(enum hold_attr attr)
{
	return attr == AUTHORIZED ? "authorized" : "driver_override";
}

/* The operation as messages name it: the hold by its attribute. */
const char *op_name(const struct rule *r, enum op op)
{
	static const char *const name[] = {
		[OP_LINK] = "driver link", [OP_UNBIND] = "unbind", [OP_MATCH_BUSID] = "match_busid",
		[OP_BIND] = "bind", [OP_NEW_ID] = "new_id", [OP_VERIFY] = "verify",
	};

	return op == OP_HOLD ? hold_name(r->run.hold) : name[op];
}

/* Records a failed operation and why, from errno. -1, for the caller to return. */
int fail(struct fail *f, enum op op)
{
	f->op = op;
	f->err = errno;
	return -1;
}

/*
 * A driver binds the devices present while it registers, before its
 * bind, unbind and new_id files exist and before its add uevent
 * (bus_add_driver, then driver_register). ENOENT from one of a driver's
 * files is a driver registering (or going away): the rule looks again
 * on the next uevent, and fails at the deadline only.
 */
int drv_registering(const struct fail *f)
{
	return f->err == ENOENT && (f->op == OP_UNBIND || f->op == OP_MATCH_BUSID || f->op == OP_BIND ||
	    f->op == OP_NEW_ID);
}

/*
 * Can the rule's driver be taught ids: has it new_id? A USB driver gets
 * new_id and then remove_id after its add uevent (usb_create_newid_files):
 * only remove_id says it has both.
 */
int teachable(const struct look *lk, const struct rule *r)
{
	return drv_has(lk, r->s.drv, r->run.hold == AUTHORIZED ? "remove_id" : "new_id");
}

/*
 * Bind said ENODEV: the driver's id table does not have the device. Teach
 * it the device's id through new_id, bind unless the kernel already did
 * (it binds every unbound match on new_id, and a second bind says EBUSY),
 * then take the id back out so the driver does not grab other devices
 * with that id later. f holds the bind's failure.
 */
static int teach(struct look *lk, struct rule *r, struct fail *f)
{
	char id[sizeof r->run.id], cur[NAME_SZ];
	int bound = 0;

	/* Without an id to teach, f stays the bind's ENODEV. */
	if (dev_id(lk, id, sizeof id) < 0)
		return -1;
	if (drv_write(lk, r->s.drv, "new_id", id) < 0)
		return fail(f, OP_NEW_ID);
	copy(r->run.id, id);
	if (dev_driver(lk, cur) < 0)
		bound = fail(f, OP_LINK);
	else if (!cur[0] && drv_write(lk, r->s.drv, "bind", lk->dev) < 0 && errno != EBUSY)
		bound = fail(f, OP_BIND);
	/* Not every bus has remove_id (ENOENT): there the id stays. */
	if (drv_write(lk, r->s.drv, "remove_id", id) < 0 && errno != ENOENT)
		say(LOG_WARNING, "%r: %s/remove_id \"%s\": %m", r, r->s.drv, id);
	return bound;
}

/* "add ID" or "del ID" for usbip-host's list of the devices it may take. */
static int busid_write(const struct look *lk, const char *drv, const char *verb)
{
	char v[NAME_SZ + 4];

	copy(v, verb);
	copy(v + 4, lk->dev);
	return drv_write(lk, drv, "match_busid", v);
}

/* The bind: through the driver's bind the look has open, for the rule's own driver. */
static int bind_write(struct look *lk, const struct move *m)
{
	char p[PATH_SZ];

	if (m->how == BACK || lk->bind < 0)
		return drv_write(lk, m->to, "bind", lk->dev);
	if (node_path(p, lk->bus, "/drivers/", m->to, "bind") < 0)
		return -1;
	return attr_store(lk->bind, p, lk->dev);
}

/* How one try of a move went. */
enum try { TRY_DONE, TRY_AGAIN, TRY_FAILED };

/*
 * One try of a move, from m->cur to m->to: unbind, then bind. AGAIN:
 * the device changed hands meanwhile (an unbind that says ENODEV, a bind
 * that says EBUSY: a native driver may still be probing a device that
 * just appeared), or it was to be unbound and is: read its link again.
 */
static enum try move_try(struct look *lk, struct rule *r, struct move *m)
{
	if (m->cur[0] && drv_write(lk, m->cur, "unbind", lk->dev) < 0) {
		fail(&m->f, OP_UNBIND);
		return m->f.err == ENODEV ? TRY_AGAIN : TRY_FAILED;
	}
	if (!m->to[0])
		return TRY_AGAIN;
	/* usbip-host takes only the USB devices listed in its match_busid. */
	if (m->how != BACK && !r->run.busid && !strcmp(lk->bus, "usb") && drv_has(lk, m->to, "match_busid")) {
		if (busid_write(lk, m->to, "add ") < 0) {
			fail(&m->f, OP_MATCH_BUSID);
			return TRY_FAILED;
		}
		r->run.busid = 1;
	}
	if (bind_write(lk, m) == 0)
		return TRY_DONE;
	fail(&m->f, OP_BIND);
	if (m->how == OWN && m->f.err == ENODEV && teachable(lk, r))
		return teach(lk, r, &m->f) < 0 ? TRY_FAILED : TRY_DONE;
	return m->f.err == EBUSY ? TRY_AGAIN : TRY_FAILED;
}

/*
 * Moves the device to m->to ("" for no driver), then verifies the driver
 * link, since the success of a write is no proof (a probe that binds
 * nothing succeeds too). A move other than BACK comes with m->cur just
 * read. 0, or -1 with m->f (ELSEWHERE: on m->cur).
 */
int dev_move(struct look *lk, struct rule *r, struct move *m)
{
	enum try ret = TRY_AGAIN;
	int tries;

	for (tries = 0; ret == TRY_AGAIN && tries < BUSY_RETRIES; tries++) {
		if ((tries || m->how == BACK) && dev_driver(lk, m->cur) < 0)
			return fail(&m->f, OP_LINK);
		if (!strcmp(m->cur, m->to))
			return 0;
		m->f.op = NO_OP;
		ret = move_try(lk, r, m);
		/* A bind still busy at the last try is the move's failure. */
		if (ret == TRY_AGAIN && m->f.op == OP_BIND && tries == BUSY_RETRIES - 1)
			return -1;
	}
	if (ret == TRY_FAILED)
		return -1;
	if (dev_driver(lk, m->cur) < 0)
		return fail(&m->f, OP_VERIFY);
	if (!strcmp(m->cur, m->to))
		return 0;
	m->f.op = OP_VERIFY;
	m->f.err = ELSEWHERE;
	return -1;
}

/*
 * Puts the device back as it was: the old override or authorized, the
 * old driver. A device that had a driver must not be left without one.
 * But a rule to none fails closed: whatever it has held stays held, and
 * nothing is bound again, so that a failure never hands a device that
 * was to be kept from every driver to one.
 */
int rollback(struct look *lk, struct rule *r, struct fail *f)
{
	struct move m = { .to = r->run.orig, .how = BACK };

	if (r->none)
		return 0;
	if (r->run.busid) {
		r->run.busid = 0;
		(void)busid_write(lk, r->s.drv, "del ");
	}
	/* A zero-byte write never reaches sysfs; "\n" clears the override. */
	if (r->run.hold != NO_HOLD_ATTR && dev_write(lk, hold_name(r->run.hold), r->run.ovr[0] ? r->run.ovr : "\n") < 0)
		return fail(f, OP_HOLD);
	/*
	 * A device that had no driver goes back to none where it is on the
	 * rule's driver: a set's member moved before another failed. One
	 * that another driver took meanwhile keeps it.
	 */
	if ((r->run.orig[0] || (dev_driver(lk, m.cur) == 0 && !strcmp(m.cur, r->s.drv))) && dev_move(lk, r, &m) < 0) {
		*f = m.f;
		if (f->err == ELSEWHERE)
			f->err = m.cur[0] ? EBUSY : ENODEV;
		return -1;
	}
	/*
	 * A device held while its driver loaded had no driver only because
	 * of the hold; authorized=1 probes nothing, so ask drivers_probe.
	 * What it answers is not used.
	 */
	if (!r->run.orig[0] && r->run.held)
		(void)drivers_probe(lk);
	return 0;
}

/*
 * Where a rule to none failed, what keeps its device now, as sysfs says
 * it: "; held by authorized 0" or "; held by driver_override none",
 * with ", still on DRIVER" where a driver has it; "; still on DRIVER"
 * or "; left unbound" where nothing holds it (a bus with neither, or
 * the hold's own write failed).
 */
void none_kept(const struct rule *r, const struct look *lk, char *back, size_t size)
{
	char path[PATH_SZ], val[NAME_SZ], now[NAME_SZ];
	const char *want = r->run.hold == AUTHORIZED ? "0" : r->s.drv;
	int held = r->run.hold != NO_HOLD_ATTR && dev_path(path, lk, hold_name(r->run.hold)) == 0 &&
	    attr_read(path, val, sizeof val) == 0 && !strcmp(val, want);

	if (dev_driver(lk, now) < 0)
		copy(now, "?");
	(void)path_join(back, size, held ? "; held by " : "", held ? hold_name(r->run.hold) : "", held ? " " : "",
	    held ? want : "", now[0] ? (held ? ", still on " : "; still on ") : held ? "" : "; left unbound", now,
	    (const char *)0);
}
