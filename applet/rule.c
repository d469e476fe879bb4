/* SPDX-License-Identifier: MIT */
/*
 * The decisions of one rule, steps 1 to 7 of drvbind(8): look at the
 * device, hold it with driver_override or authorized, have move.c move
 * it (unbind, bind, new_id, verify) or roll it back, watch a device
 * nothing can hold, and at the deadline say what is missing and hand a
 * held device back. What the rule has come to is written here alone.
 * Calls move.c, device.c, conf.c, sysfs.c, proc.c, log.c, mem.c and main.c's
 * flag.
 *
 * A rule is WAITING until it is DONE or has FAILED; while it waits,
 * r->run.wait says what for. Each look (rule_look) takes the first row
 * that holds, in this order. A follower arms a rule again (rule_arm)
 * when its device or its driver comes, or the device is bound or
 * unbound: it waits FOR_DEVICE.
 *
 *   A look finds                       It does                        Then
 *   the device not there               nothing; its add uevent        FOR_DEVICE
 *                                      brings the next look
 *   it on two buses (a rule without    says so                        FAILED
 *   BUS/)
 *   its driver link unreadable         says so                        FAILED
 *   a none rule, and no hold (no       unbind; then unbind whatever   WATCHING, DONE at
 *   override, no authorized)           binds it                       the deadline
 *   no bind file of DRIVER, the        modprobe, once; hold an        FOR_DRIVER
 *   device not on it                   unbound device (step 1)
 *                                      a dry run says it would wait   DONE
 *   it on DRIVER, held as it should    nothing (step 2)               DONE
 *   be
 *   a none rule, an unbound device     hold, drivers_probe (it waits  DONE
 *   with an override                   for a probe running), unbind
 *                                      what that probe bound
 *   anything else                      hold, unbind, bind, verify     DONE
 *                                      (steps 3 to 6)
 *
 *   The move meets                     It does                        Then
 *   unbind ENODEV or bind EBUSY: the   look and move again, up to     as its last try
 *   device changed hands               BUSY_RETRIES times (move.c)
 *   bind ENODEV, no override, and      new_id, bind unless bound,     DONE, or FAILED
 *   DRIVER has new_id                  remove_id (step 5, move.c)
 *   its bus link gone (-f)             nothing: a device added again  FOR_DEVICE
 *                                      is a new one
 *   bind EAGAIN, a device that had     nothing: it is not ready       FOR_BUS
 *   no driver (Linux 7.1 on)           (or its probe deferred); the
 *                                      kernel probes it again itself;
 *                                      an override held
 *   bind ENODEV, an unbound device     nothing: the bus has not       FOR_BUS
 *   whose override names DRIVER        finished adding it; held
 *   bind ENODEV at a USB interface,    look every SOON_MS, for        FOR_NEW_ID, FAILED
 *   DRIVER without remove_id yet       NEW_ID_WAIT_MS at most         after that
 *   (it makes new_id after its add)
 *   ENOENT from DRIVER's unbind,       nothing: it is registering;    FOR_DRIVER
 *   bind, new_id or match_busid        an override stays held
 *   any other failure, bind ENODEV     roll back (step 7)             FAILED
 *   where DRIVER has no new_id
 *
 * At the deadline (rule_expire) a rule still WAITING: WATCHING is DONE;
 * FOR_DEVICE is FAILED "device not found", unless the device may be
 * absent (absent_ok); FOR_BUS, FOR_NEW_ID and a FOR_DRIVER that was
 * refused say the refusal and roll back; FOR_DRIVER otherwise hands the
 * hold back: FAILED "driver not found".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "drvbind.h"

enum { NEW_ID_WAIT_MS = 1000 };

/* A look at the rule's device with nothing open yet: every path starts at the root. */
static struct look look_new(const struct rule *r)
{
	return (struct look){ .bus = r->bus, .dev = r->s.dev, .dir = -1, .hold = -1, .bind = -1 };
}

/* A file of the look is over: closed, or kept (see rule_look). */
static void look_end(int *fd, int keep)
{
	if (*fd >= 0 && !keep)
		fd_close(*fd);
	*fd = -1;
}

/* How a rule that is done got there, for its message. */
enum done { STAYED, MOVED, HELD_UNBOUND };

/*
 * The rule is done: "BUS/DEV: OLD -> NEW" where the device moved (with
 * the id taught); that an unbound device is now held, news however the
 * look raced a probe; or that it stays on `to' ("": none), once.
 */
static void say_done(struct rule *r, const char *to, enum done how)
{
	/* A set's member: with -v only; its set says one line for all. */
	int prio = r->in_set ? LOG_DEBUG : LOG_INFO;

	r->run.state = DONE;
	if (how == STAYED) {
		if (!r->rep.said)
			say(LOG_INFO, "%r: %s%s%s", r, flag[DRY] ? "would stay " : "already ", *to ? "on " : "unbound", to);
		return;
	}
	r->rep.news = 1;
	if (how == HELD_UNBOUND)
		say(prio, "%r: unbound; held by %s %s", r, hold_name(r->run.hold),
		    r->run.hold == AUTHORIZED ? "0" : r->s.drv);
	else
		say(prio, "%r: %s%s -> %s%s%s%s", r, flag[DRY] ? "would move " : "", drv_or_none(r->run.orig),
		    drv_or_none(to), r->run.id[0] ? " (new_id \"" : "", r->run.id, r->run.id[0] ? "\")" : "");
}

/*
 * Reports the failure of a move, m->f, and the rollback's result, on
 * one line; m->cur: where the device was at the failure.
 */
static void rule_fail(struct rule *r, struct look *lk, const struct move *m)
{
	const struct fail *f = &m->f;
	char now[NAME_SZ], why[NAME_SZ + 16], back[3 * NAME_SZ];
	struct fail rb;
	int rb_failed;

	/*
	 * The rollback goes by path: a device unplugged and plugged again
	 * during the look is a new directory, which the one open since no
	 * longer shows.
	 */
	look_end(&lk->dir, 0);
	if (f->err == ELSEWHERE)
		(void)path_join(why, sizeof why, m->cur[0] ? "bound to " : "not bound", m->cur, (const char *)0);
	else
		copy(why, err_str(f->err));
	rb_failed = rollback(lk, r, &rb) < 0;
	/* Where it had no driver, the rollback's drivers_probe may have found one. */
	if (r->run.orig[0] || dev_driver(lk, now) < 0)
		copy(now, r->run.orig);
	if (r->none)
		none_kept(r, lk, back, sizeof back);
	else if (rb_failed)
		(void)path_join(back, sizeof back, "; rollback to ", drv_or_none(now), " failed at ", op_name(r, rb.op),
		    ": ", err_str(rb.err), (const char *)0);
	else
		(void)path_join(back, sizeof back, r->run.orig[0] ? "; back on " : now[0] ? "; now on " : "; left unbound",
		    now, (const char *)0);
	/* One line for both: /dev/kmsg keeps about ten lines in five seconds. */
	say(LOG_ERR, "%r: %s -> %s failed at %s: %s%s%s%s%s", r, drv_or_none(r->run.orig), r->s.drv, op_name(r, f->op),
	    why, r->run.id[0] ? " after new_id \"" : "", r->run.id, r->run.id[0] ? "\"" : "", back);
	r->run.state = FAILED;
}

/* The hold now keeps every other driver from the device until the rule ends. */
static void mark_held(struct rule *r)
{
	r->run.held = 1;
	say(LOG_DEBUG, "%r: held for %s by %s", r, r->s.drv, hold_name(r->run.hold));
}

/* The rule waits for `wait' after the refusal *f, said at the deadline. */
static void wait_refused(struct rule *r, enum wait wait, const struct fail *f)
{
	r->run.wait = wait;
	r->run.refused = *f;
	if (drv_registering(f))
		say(LOG_DEBUG, "%r: %s: %e; waiting", r, op_name(r, f->op), f->err);
}

/*
 * A PCI remove releases the driver twice (pci_stop_dev, then device_del
 * once the bus link is gone): a follower woken by the first binds a
 * device on its way out, and the second undoes it. A device whose bus
 * link went during the move is no failure of its rule: a follower looks
 * again, and one added again is a new device. 1: so it went.
 */
static int removed(struct rule *r, const struct look *lk)
{
	if (!flag[FOLLOW] || dev_there(lk))
		return 0;
	say(LOG_DEBUG, "%r: removed during the move", r);
	rule_arm(r, r->run.until);
	return 1;
}

/* Whether a new_id may still come: NEW_ID_WAIT_MS from the first refusal. */
static int new_id_soon(struct rule *r)
{
	long long now = now_ms();

	if (!r->run.new_id_until)
		r->run.new_id_until = now + NEW_ID_WAIT_MS;
	return now < r->run.new_id_until;
}

/*
 * A failed move may be one to wait out: the move table's rows from the
 * bus link gone to FOR_DRIVER, in order. cur: where the device was
 * before the move. 1: the rule waits; 0: it failed.
 */
static int refusal_waits(struct rule *r, const struct look *lk, const char *cur, const struct fail *f)
{
	enum wait wait;

	if (removed(r, lk))
		return 1;
	/*
	 * From Linux 7.1 a device is probed only once device_add() has
	 * finished, after its add uevent; a bind in between says EAGAIN,
	 * as does a probe that deferred. The kernel then probes the device
	 * itself, as the hold says, and its bind uevent (or the next)
	 * brings the next look. A device that had a driver was ready: it
	 * goes back to it.
	 */
	if (f->op == OP_BIND && f->err == EAGAIN && !cur[0])
		wait = FOR_BUS;
	/*
	 * Until the bus has finished adding a new device (PCI sets
	 * match_driver after the add uevent), bind says ENODEV even for the
	 * driver its override names, and then the kernel binds that driver
	 * itself. A device without a driver stays held so; at the deadline
	 * it is handed back.
	 */
	else if (f->op == OP_BIND && f->err == ENODEV && r->run.hold == OVERRIDE && !cur[0]) {
		mark_held(r);
		wait = FOR_BUS;
	}
	/*
	 * usb_register_driver makes new_id and remove_id after the driver's
	 * add uevent, and nothing announces them: a bind that the driver's
	 * table refuses before they are there is tried again soon, for
	 * NEW_ID_WAIT_MS at most.
	 */
	else if (f->op == OP_BIND && f->err == ENODEV && r->run.hold == AUTHORIZED && !r->none &&
	    !teachable(lk, r) && new_id_soon(r))
		wait = FOR_NEW_ID;
	else if (drv_registering(f))
		wait = FOR_DRIVER;
	else
		return 0;
	/* An override written stays: the rule holds the device until it ends. */
	r->run.held |= r->run.hold == OVERRIDE;
	wait_refused(r, wait, f);
	return 1;
}

/*
 * Step 3: the hold, val, where it `changes' (val is not its value now),
 * or where an override the rule needs is not held yet (a driver
 * registering meanwhile writes it once, not at every look). authorized
 * 0 unbinds the driver itself; 1 only lets a bind through. m->cur: what
 * the device is on, read again where the hold may have changed it.
 */
static int hold_write(struct look *lk, struct rule *r, const char *val, int changes, struct move *m)
{
	if (!changes && !(r->run.hold == OVERRIDE && !r->run.held))
		return 0;
	/*
	 * The store waits under the device lock for a probe that was
	 * running (a native driver on a device just added), which then
	 * binds whatever the hold says: a device that had no driver is
	 * read again after it, as is one that authorized 0 unbinds. One
	 * that had a driver keeps it.
	 */
	if (attr_store(lk->hold, lk->hold_path, val) < 0)
		return fail(&m->f, OP_HOLD);
	/* A member held anew, even one left without a driver, is its set's news: the line comes again. */
	r->rep.news = 1;
	/*
	 * From 7.0 the override store takes a spinlock of its own, not the
	 * device lock, and no longer waits for a probe already running,
	 * which then binds the driver it matched. A move meets that probe
	 * at its bind (EBUSY, then tries again), but a none rule writes
	 * nothing more to an unbound device: drivers_probe takes the device
	 * lock, so it returns once such a probe has ended, and binds nothing
	 * itself over the override none. Its answer does not matter (7.1
	 * says EINVAL while the device is not ready, when no probe runs).
	 */
	if (!m->cur[0] && r->none && r->run.hold == OVERRIDE)
		(void)drivers_probe(lk);
	if ((!m->cur[0] || r->run.hold == AUTHORIZED) && dev_driver(lk, m->cur) < 0)
		return fail(&m->f, OP_LINK);
	/*
	 * Another driver that bound meanwhile is the one to go back to; the
	 * rule's own, bound through the hold just written, is the move.
	 */
	if (m->cur[0] && strcmp(m->cur, r->s.drv))
		copy(r->run.orig, m->cur);
	return 0;
}

/* Steps 2 to 7 of a rule whose driver is there; the hold reads `hold_val'. */
static void rule_move(struct rule *r, struct look *lk, const char *cur, const char *hold_val)
{
	struct move m = { .to = r->none ? "" : r->s.drv, .how = OWN };
	const char *val = NULL;
	int changes;

	/*
	 * driver_override "none" (a none rule's s.drv) or authorized 0
	 * keeps every driver away, also later ones; USB binds only an
	 * authorized interface.
	 */
	if (r->run.hold == OVERRIDE) {
		val = r->s.drv;
		m.how = OVERRIDDEN;
	} else if (r->run.hold == AUTHORIZED) {
		val = r->none ? "0" : "1";
		m.how = r->none ? BACK : OWN;
	}
	changes = val && strcmp(hold_val, val);
	/* A held override lets the kernel bind the driver as it registers, or unbind the old one as it goes. */
	if (!strcmp(cur, m.to) && !(r->none && changes)) {
		say_done(r, m.to, r->run.held || r->run.new_id_until ? MOVED : STAYED);
		return;
	}
	/* Looking again for a new_id, the device is unbound by the first look. */
	if (!r->run.new_id_until)
		copy(r->run.orig, cur);
	copy(m.cur, cur);
	if (!flag[DRY]) {
		int failed;

		/* Looking again for a new_id to come: no bind until it is there. */
		if (r->run.new_id_until && !teachable(lk, r)) {
			m.f = (struct fail){ OP_BIND, ENODEV };
			failed = 1;
		} else {
			failed = hold_write(lk, r, val, changes, &m) < 0 || dev_move(lk, r, &m) < 0;
		}
		if (failed && refusal_waits(r, lk, cur, &m.f))
			return;
		if (failed) {
			rule_fail(r, lk, &m);
			return;
		}
	}
	say_done(r, m.to, strcmp(r->run.orig, m.to) ? MOVED : changes && !flag[DRY] ? HELD_UNBOUND : STAYED);
}

/*
 * Neither driver_override nor authorized: nothing keeps a driver away,
 * so a none rule watches its device until the deadline and unbinds any
 * driver that binds it meanwhile (the bind uevent brings the look).
 * Its outcome is said once; the rule stays WAITING until the deadline.
 */
static void rule_watch(struct rule *r, struct look *lk, const char *cur)
{
	struct move m = { .to = "", .how = BACK };
	int watching = r->run.wait == WATCHING;

	if (!watching)
		copy(r->run.orig, cur);
	/* A move BACK reads the driver link into m.cur first. */
	if (cur[0] && !flag[DRY] && dev_move(lk, r, &m) < 0) {
		if (drv_registering(&m.f))
			wait_refused(r, watching ? WATCHING : FOR_DRIVER, &m.f);
		else
			rule_fail(r, lk, &m);
		return;
	}
	if (watching) {
		if (cur[0])
			say(LOG_INFO, "%r: %s bound it; unbound again", r, cur);
		return;
	}
	say_done(r, "", cur[0] ? MOVED : STAYED);
	if (!flag[DRY]) {
		r->run.state = WAITING;
		r->run.wait = WATCHING;
	}
}

/* A USB interface ("2-1:1.0"); a USB device ("2-1") has no ':'. */
static int usb_intf(const struct rule *r)
{
	const char *d;

	if (strcmp(r->bus, "usb"))
		return 0;
	for (d = r->s.dev; *d && *d != ':'; d++)
		;
	return *d;
}

/* Opens the device's attribute `attr' read-write as the look's hold; 1 if it has one. */
static int hold_open(struct look *lk, const char *attr)
{
	if (dev_path(lk->hold_path, lk, attr) < 0)
		return 0;
	lk->hold = lk->dir >= 0 ? open_at(lk->dir, attr, O_RDWR) : sys_open(lk->hold_path, O_RDWR);
	return lk->hold >= 0 || errno != ENOENT;
}

/*
 * The device's hold and its value in val ("" unreadable), kept for the
 * rollback as the run's first look finds it: later looks may find the
 * rule's own value, a device plugged anew its own. "(null)" is unset.
 */
static void hold_read(struct rule *r, struct look *lk, char *val)
{
	if (hold_open(lk, "driver_override"))
		r->run.hold = OVERRIDE;
	else if (usb_intf(r) && hold_open(lk, "authorized"))
		r->run.hold = AUTHORIZED;
	else
		r->run.hold = NO_HOLD_ATTR;
	if (lk->hold < 0 || fd_get(lk->hold, val, NAME_SZ) < 0)
		val[0] = '\0';
	if (!r->run.ovr_read) {
		copy(r->run.ovr, strcmp(val, "(null)") ? val : "");
		r->run.ovr_read = 1;
	}
}

/*
 * Is the rule's device there? A rule without a bus searches every bus
 * and takes the one it is on; two are its failure. 1: there.
 */
int rule_there(struct rule *r)
{
	char found[2][NAME_SZ];
	struct look lk = look_new(r);
	int n, lo;

	if (r->s.bus[0])
		return dev_there(&lk);
	n = bus_find(r->s.dev, found);
	if (n == 1)
		copy(r->bus, found[0]);
	if (n < 2)
		return n;
	lo = strcmp(found[0], found[1]) > 0;
	say(LOG_ERR, "%s: device on both %s and %s", r->s.dev, found[lo], found[!lo]);
	r->run.state = FAILED;
	return 0;
}

/*
 * The device's directory, opened through its bus's link (struct look);
 * where the bus is not known yet, or the open fails, every path starts
 * at the root. 1: there.
 */
static int dev_open(struct rule *r, struct look *lk)
{
	char path[PATH_SZ];

	if (r->bus[0] && PATH(path, "bus/", r->bus, "/devices/", r->s.dev) == 0 && (lk->dir = sys_open(path, O_PATH | O_DIRECTORY)) >= 0)
		return 1;
	return rule_there(r);
}

/*
 * modprobe is asked for the rule's driver once, and once between the
 * rules that wait for it: 64 rules for vfio-pci would start 64
 * modprobes at once, each loading the same module.
 */
static void drv_ask(struct rule *r)
{
	struct rule *q;

	if (r->run.asked || !*conf.modprobe)
		return;
	r->run.asked = 1;
	for (q = rules; q < rules + conf.nrules; q++)
		if (q != r && q->run.asked && q->run.state == WAITING && !strcmp(q->s.drv, r->s.drv))
			return;
	drv_request(r->s.drv);
}

/*
 * The driver's bind, open for the move where the device is to go to it.
 * The kernel makes a driver's directory before its bind file and sends
 * the add uevent last: only the bind file says it is there. 1: there,
 * or not needed.
 */
static int drv_open(const struct rule *r, struct look *lk, const char *cur)
{
	char path[PATH_SZ];

	if (r->none || !strcmp(cur, r->s.drv) || node_path(path, r->bus, "/drivers/", r->s.drv, "bind") < 0)
		return 1;
	lk->bind = sys_open(path, O_WRONLY);
	return lk->bind >= 0 || errno != ENOENT;
}

/*
 * Step 1: the driver is missing. modprobe is asked, and a device without
 * a driver is held so that no native driver takes it while its driver
 * loads. A dry run says what it would wait for.
 */
static void drv_wait(struct rule *r, struct look *lk, const char *cur)
{
	r->run.wait = FOR_DRIVER;
	if (flag[DRY]) {
		/* A set says its plan in its own line; its members, with -v. */
		say(r->in_set ? LOG_DEBUG : LOG_INFO, "%r: would wait for %s (not loaded now), then move from %s", r,
		    r->s.drv, drv_or_none(cur));
		r->run.state = DONE;
		return;
	}
	drv_ask(r);
	if (!cur[0] && r->run.hold != NO_HOLD_ATTR && !r->run.held && conf.timeout &&
	    attr_store(lk->hold, lk->hold_path, r->run.hold == AUTHORIZED ? "0" : r->s.drv) == 0)
		mark_held(r);
}

/* One look, the table's rows in order: the device, its driver and hold, the driver's bind, the move. */
static void look_at(struct rule *r, struct look *lk)
{
	char cur[NAME_SZ], hold_val[NAME_SZ];

	if (!dev_open(r, lk))
		return;
	if (dev_driver(lk, cur) < 0) {
		say(LOG_ERR, "%r: cannot read driver link: %m", r);
		r->run.state = FAILED;
		return;
	}
	hold_read(r, lk, hold_val);
	if (r->none && r->run.hold == NO_HOLD_ATTR)
		rule_watch(r, lk, cur);
	else if (!drv_open(r, lk, cur))
		drv_wait(r, lk, cur);
	else
		rule_move(r, lk, cur, hold_val);
}

/*
 * The rule's run starts over, until `until' (-f saw its device or its
 * driver come, a bind or an unbind): what a look finds as it should be
 * is not said again, and a device gone meanwhile is not missed.
 */
void rule_arm(struct rule *r, long long until)
{
	r->run = (struct run){ .state = WAITING, .wait = FOR_DEVICE, .until = until };
	r->rep.said = r->rep.absent_ok = 1;
}

void rule_look(struct rule *r)
{
	struct look lk = look_new(r);
	int keep;

	look_at(r, &lk);
	/*
	 * A one-shot run leaves the files of a rule that is over to its
	 * exit or exec (all are close-on-exec): three a rule, 3 *
	 * DEVICES_MAX at most. A follower, which looks again and again,
	 * closes them, as does every run for a set's device beyond its
	 * limits, which has no slot and may be any number of them.
	 */
	keep = !flag[FOLLOW] && r->run.state != WAITING && !r->spare;
	look_end(&lk.dir, keep);
	look_end(&lk.hold, keep);
	look_end(&lk.bind, keep);
}

/* A member of a set another member failed: back where it was. */
void rule_undo(struct rule *r)
{
	struct look lk = look_new(r);
	struct fail f;

	if (rollback(&lk, r, &f) < 0)
		say(LOG_ERR, "%r: rollback to %s failed at %s: %e", r, drv_or_none(r->run.orig), op_name(r, f.op), f.err);
	r->run.state = FAILED;
}

/* The deadline passed: say what is missing, and hand a held device back. */
void rule_expire(struct rule *r)
{
	struct look lk = look_new(r);
	struct move m = { .f = r->run.refused };

	if (r->run.wait == WATCHING) {
		r->run.state = DONE;
		return;
	}
	if (!rule_there(r)) {
		/* Not missed: a device -f saw go, or that left its set. */
		if (r->run.state != FAILED && r->rep.absent_ok) {
			r->run.state = DONE;
			r->run.gone = 1;
			return;
		}
		if (r->run.state != FAILED)
			say(LOG_ERR, "%r: device not found (waited %u s)", r, conf.timeout);
	} else if (m.f.op != NO_OP) {
		rule_fail(r, &lk, &m);
	} else {
		/* The native driver may have a held device back: nothing is lost. */
		if (r->run.held)
			(void)rollback(&lk, r, &m.f);
		(void)dev_driver(&lk, m.cur);
		say(LOG_ERR, "%r: driver %s not found; %s%s%s (waited %u s)", r, r->s.drv,
		    r->run.held ? "now " : "stays ", m.cur[0] ? "on " : "unbound", m.cur, conf.timeout);
	}
	r->run.state = FAILED;
}
