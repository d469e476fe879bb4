/* SPDX-License-Identifier: MIT */
/*
 * The procedure of one rule, steps 1 to 7 of drvbind(8): look at the
 * device, hold it with driver_override or authorized, unbind, bind
 * (new_id where the driver does not know it), verify the driver link,
 * and roll back on any failure; watch a device nothing can hold; and at
 * the deadline, say what is missing and hand a held device back.
 * Calls device.c, conf.c's rules, sysfs.c, proc.c, log.c, mem.c and main.c's
 * flag.
 *
 * A rule is WAITING until it is DONE or has FAILED; while it waits,
 * r->wait says what for. Each look (rule_step) takes the first row that
 * holds. A follower arms a rule again (rule_arm) when its device or its
 * driver comes, or the device is bound or unbound: it waits FOR_DEVICE.
 *
 *   A look finds                       It does                        Then
 *   the device not there               nothing; its add uevent        FOR_DEVICE
 *                                      brings the next look
 *   it on DRIVER, held as it should    nothing (step 2)               DONE
 *   be
 *   a none rule, and no hold (no       unbind; then unbind whatever   WATCHING, DONE at
 *   override, no authorized)           binds it                       the deadline
 *   no bind file of DRIVER             modprobe, once; hold an        FOR_DRIVER
 *                                      unbound device (step 1)
 *   a none rule, an unbound device     hold, drivers_probe (it waits  DONE
 *   with an override                   for a probe running), unbind
 *                                      what that probe bound
 *   anything else                      hold, unbind, bind, verify     DONE
 *                                      (steps 3 to 6)
 *
 *   The move meets                     It does                        Then
 *   unbind ENODEV or bind EBUSY: the   look and move again, up to     as its last try
 *   device changed hands               BUSY_RETRIES times
 *   bind ENODEV, no override, and      new_id, bind unless bound,     DONE, or FAILED
 *   DRIVER has new_id                  remove_id (step 5)
 *   bind ENODEV, an unbound device     nothing: the bus has not       FOR_BUS
 *   whose override names DRIVER        finished adding it; held
 *   bind EAGAIN, a device that had     nothing: it is not ready       FOR_BUS
 *   no driver (Linux 7.1 on)           (or its probe deferred); the
 *                                      kernel probes it again itself;
 *                                      an override held
 *   bind ENODEV at a USB interface,    look every SOON_MS, for        FOR_NEW_ID, FAILED
 *   DRIVER without remove_id yet       NEW_ID_WAIT_MS at most         after that
 *   (it makes new_id after its add)
 *   bind ENODEV, DRIVER without        roll back (step 7)             FAILED
 *   new_id
 *   ENOENT from DRIVER's unbind,       nothing: it is registering;    FOR_DRIVER
 *   bind, new_id or match_busid        an override stays held
 *   its bus link gone (-f)             nothing: a device added again  FOR_DEVICE
 *                                      is a new one
 *   any other failure                  roll back (step 7)             FAILED
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

enum { BUSY_RETRIES = 3, NEW_ID_WAIT_MS = 1000 };

/*
 * How dev_move goes: BACK, to where the device was (the rollback, a
 * watch); the rule's OWN move, where match_busid and new_id apply; or
 * OVERRIDDEN, its own move over an override, which matches whatever
 * the ids (so no new_id).
 */
enum move { BACK, OWN, OVERRIDDEN };

/*
 * The files one look keeps open, each -1 while not: the device's
 * directory, which proves it is there and from which its driver link
 * and hold are one step; its hold, read and then written; the driver's
 * bind, found and then written. A one-shot run leaves those of a rule
 * that is over to its exit or exec (all are close-on-exec): three a
 * rule, 3 * DEVICES_MAX at most. A follower, which looks again and
 * again, closes them.
 */
static struct {
	int dir, hold, bind;
} look = { -1, -1, -1 };

/* The look is over: a file of it closed, or kept (see look). */
static void look_end(int *fd, int keep)
{
	if (*fd >= 0 && !keep)
		fd_close(*fd);
	*fd = -1;
}

static const char *hold_attr(const struct rule *r)
{
	return r->hold == AUTHORIZED ? "authorized" : "driver_override";
}

static const char *step_name(const struct rule *r, enum step step)
{
	static const char *const name[] = {
		[STEP_LINK] = "driver link", [STEP_UNBIND] = "unbind", [STEP_MATCH_BUSID] = "match_busid",
		[STEP_BIND] = "bind", [STEP_NEW_ID] = "new_id", [STEP_VERIFY] = "verify",
	};

	return step == STEP_HOLD ? hold_attr(r) : name[step];
}

/*
 * Why a store (attr_store's `ret') failed: errno, or SHORT_WRITE. Not
 * inlined: a dozen steps record their failure, and each would carry
 * errno's lookup.
 */
static __attribute__((noinline)) int store_err(int ret)
{
	return ret == STORE_SHORT ? SHORT_WRITE : errno;
}

/* Records a failed step and why. -1, for the caller to return. */
static int fail(struct fail *f, enum step step, int ret)
{
	f->step = step;
	f->err = store_err(ret);
	return -1;
}

/*
 * The driver the rule's device is bound to now, from its directory
 * where the look has it open. Not inlined: its seven callers pass one
 * pointer, not four.
 */
static __attribute__((noinline)) int driver_now(const struct rule *r, char *drv)
{
	return dev_driver(look.dir, r->bus, r->s.dev, drv);
}

/* How a rule that is done got there, for its message. */
enum done { STAYED, MOVED, HELD_UNBOUND };

/*
 * The rule is done: "BUS/DEV: OLD -> NEW" where the device moved, with
 * the id taught where new_id was needed; that an unbound device is now
 * held so, which is news however the look raced a probe; or that it
 * stays on `to' ("": none), unless that was said before.
 */
static void say_done(struct rule *r, const char *to, enum done how)
{
	/* A set's member: with -v only; its set says one line for all. */
	int prio = r->in_set ? LOG_DEBUG : LOG_INFO;

	r->state = DONE;
	if (how == STAYED) {
		if (!r->said)
			say(LOG_INFO, "%r: %s%s%s", r, flag[DRY] ? "would stay " : "already ", *to ? "on " : "unbound", to);
		return;
	}
	if (r->in_set)
		rules[r->in_set - 1].said = 0;
	if (how == HELD_UNBOUND)
		say(prio, "%r: unbound; held by %s %s", r, hold_attr(r), r->hold == AUTHORIZED ? "0" : r->s.drv);
	else
		say(prio, "%r: %s%s -> %s%s%s%s", r, flag[DRY] ? "would move " : "", drv_or_none(r->orig), drv_or_none(to),
		    r->id[0] ? " (new_id \"" : "", r->id, r->id[0] ? "\")" : "");
}

/*
 * A driver binds the devices present while it registers, before its
 * bind, unbind and new_id files exist and before its add uevent
 * (bus_add_driver, then driver_register). ENOENT from one of a driver's
 * files is a driver registering (or going away): the rule looks again
 * on the next uevent, and fails at the deadline only.
 */
static int drv_registering(const struct fail *f)
{
	return f->err == ENOENT && f->step >= STEP_UNBIND && f->step <= STEP_NEW_ID;
}

/*
 * Can the rule's driver be taught ids: has it new_id? A USB driver gets
 * new_id and then remove_id after its add uevent (usb_create_newid_files):
 * only remove_id says it has both.
 */
static int teachable(const struct rule *r)
{
	return drv_has(r, r->s.drv, r->hold == AUTHORIZED ? "remove_id" : "new_id");
}

/*
 * Bind said ENODEV: the driver's id table does not have the device. Teach
 * it the device's id through new_id, bind unless the kernel already did
 * (it binds every unbound match on new_id, and a second bind says EBUSY),
 * then take the id back out so the driver does not grab other devices
 * with that id later. *f holds the bind's failure.
 */
static int teach(struct rule *r, struct fail *f)
{
	char id[sizeof r->id], cur[NAME_SZ];
	int ret, bound = 0;

	/* Without an id to teach, *f stays the bind's ENODEV. */
	if (dev_id(r, id, sizeof id) < 0)
		return -1;
	if ((ret = drv_write(r, r->s.drv, "new_id", id)) < 0)
		return fail(f, STEP_NEW_ID, ret);
	copy(r->id, id);
	if (driver_now(r, cur) < 0)
		bound = fail(f, STEP_LINK, -1);
	else if (!cur[0] && (ret = drv_write(r, r->s.drv, "bind", r->s.dev)) < 0)
		bound = fail(f, STEP_BIND, ret) < 0 && f->err != EBUSY ? -1 : 0;
	/* Not every bus has remove_id (ENOENT): there the id stays. */
	if ((ret = drv_write(r, r->s.drv, "remove_id", id)) < 0 && (ret = store_err(ret)) != ENOENT)
		say(LOG_WARNING, "%r: %s/remove_id \"%s\": %e", r, r->s.drv, id, ret);
	return bound;
}

/* "add ID" or "del ID" for usbip-host's list of the devices it may take. */
static int busid_write(struct rule *r, const char *verb)
{
	char v[NAME_SZ + 4];

	copy(v, verb);
	copy(v + 4, r->s.dev);
	return drv_write(r, r->s.drv, "match_busid", v);
}

/*
 * One try of a move, from `cur' to `to': unbind, then bind. 1: the
 * device changed hands meanwhile (an unbind that says ENODEV, a bind
 * that says EBUSY: a native driver may still be probing a device that
 * just appeared), try again; 0: done; -1: failed, in *f.
 */
static int move_try(struct rule *r, const char *to, enum move how, int bind, const char *cur, struct fail *f)
{
	int ret;

	if (cur[0] && (ret = drv_write(r, cur, "unbind", r->s.dev)) < 0) {
		fail(f, STEP_UNBIND, ret);
		return f->err == ENODEV ? 1 : -1;
	}
	if (!*to)
		return 1;
	/* usbip-host takes only the USB devices listed in its match_busid. */
	if (how != BACK && !r->busid && !strcmp(r->bus, "usb") && drv_has(r, to, "match_busid")) {
		if ((ret = busid_write(r, "add ")) < 0)
			return fail(f, STEP_MATCH_BUSID, ret);
		r->busid = 1;
	}
	if ((ret = drv_store(r, to, "bind", r->s.dev, bind)) == 0)
		return 0;
	fail(f, STEP_BIND, ret);
	if (how == OWN && f->err == ENODEV && teachable(r))
		return teach(r, f);
	return f->err == EBUSY ? 1 : -1;
}

/*
 * Moves the device to `to' ("" for no driver), then checks the driver
 * link, since the success of a write is no proof (a probe that binds
 * nothing succeeds too). An OWN move comes with `cur' just read, and
 * `bind', the driver's bind, open (or -1). 0, or -1 with *f (ELSEWHERE:
 * on `cur').
 */
static int dev_move(struct rule *r, const char *to, enum move how, int bind, char *cur, struct fail *f)
{
	int tries, ret = 1, verify;

	/* The last read of the driver link, after the move, is its verify. */
	for (tries = 0;; tries++) {
		verify = ret == 0 || tries == BUSY_RETRIES;
		if ((tries || how == BACK) && driver_now(r, cur) < 0)
			return fail(f, verify ? STEP_VERIFY : STEP_LINK, -1);
		if (!strcmp(cur, to))
			return 0;
		if (verify) {
			f->step = STEP_VERIFY;
			f->err = ELSEWHERE;
			return -1;
		}
		f->step = NO_STEP;
		ret = move_try(r, to, how, bind, cur, f);
		/* A bind still busy at the last try is the move's failure. */
		if (ret < 0 || (ret > 0 && f->step == STEP_BIND && tries == BUSY_RETRIES - 1))
			return -1;
	}
}

/* Asks the bus to probe the device (drivers_probe); what it answers is not used. */
static void drivers_probe(const struct rule *r)
{
	(void)node_store(r->bus, "/drivers_probe", "", NULL, r->s.dev, -1);
}

/*
 * Puts the device back as it was: the old override or authorized, the
 * old driver. A device that had a driver must not be left without one.
 * But a rule to none fails closed: whatever it has held stays held, and
 * nothing is bound again, so that a failure never hands a device that
 * was to be kept from every driver to one.
 */
static int rollback(struct rule *r, struct fail *f)
{
	char cur[NAME_SZ];
	int ret = 0;

	if (r->none)
		return 0;
	if (r->busid) {
		r->busid = 0;
		(void)busid_write(r, "del ");
	}
	/* A zero-byte write never reaches sysfs; "\n" clears the override. */
	if (r->hold && (ret = dev_write(r, hold_attr(r), r->ovr[0] ? r->ovr : "\n")) < 0)
		return fail(f, STEP_HOLD, ret);
	if (r->orig[0] && (ret = dev_move(r, r->orig, BACK, -1, cur, f)) < 0 && f->err == ELSEWHERE)
		f->err = cur[0] ? EBUSY : ENODEV;
	/*
	 * A device held while its driver loaded had no driver only because
	 * of the hold; authorized=1 probes nothing, so ask drivers_probe.
	 */
	if (!r->orig[0] && r->held)
		drivers_probe(r);
	return ret;
}

/*
 * Where a rule to none failed, what keeps its device now, as sysfs says
 * it: "; held by authorized 0" or "; held by driver_override none",
 * with ", still on DRIVER" where a driver has it; "; still on DRIVER"
 * or "; left unbound" where nothing holds it (a bus with neither, or
 * the hold's own write failed).
 */
static void none_kept(const struct rule *r, char *back, size_t size)
{
	char path[PATH_SZ], val[NAME_SZ], now[NAME_SZ];
	const char *want = r->hold == AUTHORIZED ? "0" : r->s.drv;
	int held = r->hold && dev_path(path, r, hold_attr(r)) == 0 && attr_read(path, val, sizeof val) == 0 &&
	    !strcmp(val, want);

	if (driver_now(r, now) < 0)
		copy(now, "?");
	(void)path_join(back, size, held ? "; held by " : "", held ? hold_attr(r) : "", held ? " " : "", held ? want : "",
	    now[0] ? (held ? ", still on " : "; still on ") : held ? "" : "; left unbound", now, (const char *)0);
}

/* Reports the failure of a step and the rollback's result on one line. */
static void rule_fail(struct rule *r, const struct fail *f, const char *cur)
{
	char now[NAME_SZ], why[NAME_SZ + 16], back[3 * NAME_SZ];
	struct fail rb;
	int rb_failed;

	/*
	 * The rollback goes by path: a device unplugged and plugged again
	 * during the look is a new directory, which the one open since no
	 * longer shows.
	 */
	look_end(&look.dir, 0);
	if (f->err == ELSEWHERE)
		(void)path_join(why, sizeof why, cur[0] ? "bound to " : "not bound", cur, (const char *)0);
	else
		copy(why, err_str(f->err));
	rb_failed = rollback(r, &rb) < 0;
	/* Where it had no driver, the rollback's drivers_probe may have found one. */
	if (r->orig[0] || driver_now(r, now) < 0)
		copy(now, r->orig);
	if (r->none)
		none_kept(r, back, sizeof back);
	else if (rb_failed)
		(void)path_join(back, sizeof back, "; rollback to ", drv_or_none(now), " failed at ", step_name(r, rb.step),
		    ": ", err_str(rb.err), (const char *)0);
	else
		(void)path_join(back, sizeof back, r->orig[0] ? "; back on " : now[0] ? "; now on " : "; left unbound",
		    now, (const char *)0);
	/* One line for both: /dev/kmsg keeps about ten lines in five seconds. */
	say(LOG_ERR, "%r: %s -> %s failed at %s: %s%s%s%s%s", r, drv_or_none(r->orig), r->s.drv, step_name(r, f->step),
	    why, r->id[0] ? " after new_id \"" : "", r->id, r->id[0] ? "\"" : "", back);
	r->state = FAILED;
}

/* The hold now keeps every other driver from the device until the rule ends. */
static void mark_held(struct rule *r)
{
	r->held = 1;
	say(LOG_DEBUG, "%r: held for %s by %s", r, r->s.drv, hold_attr(r));
}

/* The rule waits for `wait' after the refusal *f, said at the deadline. */
static void wait_refused(struct rule *r, enum wait wait, const struct fail *f)
{
	r->wait = wait;
	r->refused = *f;
	if (drv_registering(f))
		say(LOG_DEBUG, "%r: %s: %e; waiting", r, step_name(r, f->step), f->err);
}

/*
 * A PCI remove releases the driver twice (pci_stop_dev, then device_del
 * once the bus link is gone): a follower woken by the first binds a
 * device on its way out, and the second undoes it. A device whose bus
 * link went during the move is no failure of its rule: a follower looks
 * again, and one added again is a new device. 1: so it went.
 */
static int removed(struct rule *r)
{
	if (!flag[FOLLOW] || dev_has(r, ""))
		return 0;
	say(LOG_DEBUG, "%r: removed during the move", r);
	rule_arm(r, r->until);
	return 1;
}

/* Whether a new_id may still come: NEW_ID_WAIT_MS from the first refusal. */
static int new_id_soon(struct rule *r)
{
	long long now = now_ms();

	if (!r->new_id_until)
		r->new_id_until = now + NEW_ID_WAIT_MS;
	return now < r->new_id_until;
}

/*
 * A move that failed may still be one to wait out (the table's rows
 * FOR_BUS, FOR_NEW_ID, FOR_DRIVER and the bus link gone). 1: the rule
 * waits; 0: it failed.
 */
static int refusal_waits(struct rule *r, const char *cur, struct fail *f)
{
	enum wait wait;

	if (removed(r))
		return 1;
	/*
	 * From Linux 7.1 a device is probed only once device_add() has
	 * finished, after its add uevent; a bind in between says EAGAIN,
	 * as does a probe that deferred. The kernel then probes the device
	 * itself, as the hold says, and its bind uevent (or the next)
	 * brings the next look. A device that had a driver was ready: it
	 * goes back to it.
	 */
	if (f->step == STEP_BIND && f->err == EAGAIN && !cur[0])
		wait = FOR_BUS;
	/*
	 * Until the bus has finished adding a new device (PCI sets
	 * match_driver after the add uevent), bind says ENODEV even for the
	 * driver its override names, and then the kernel binds that driver
	 * itself. A device without a driver stays held so; at the deadline
	 * it is handed back.
	 */
	else if (f->step == STEP_BIND && f->err == ENODEV && r->hold == OVERRIDE && !cur[0]) {
		mark_held(r);
		wait = FOR_BUS;
	}
	/*
	 * usb_register_driver makes new_id and remove_id after the driver's
	 * add uevent, and nothing announces them: a bind that the driver's
	 * table refuses before they are there is tried again soon, for
	 * NEW_ID_WAIT_MS at most.
	 */
	else if (f->step == STEP_BIND && f->err == ENODEV && r->hold == AUTHORIZED && !r->none &&
	    !teachable(r) && new_id_soon(r))
		wait = FOR_NEW_ID;
	else if (drv_registering(f))
		wait = FOR_DRIVER;
	else
		return 0;
	/* An override written stays: the rule holds the device until it ends. */
	r->held |= r->hold == OVERRIDE;
	wait_refused(r, wait, f);
	return 1;
}

/*
 * Step 3: the hold. authorized 0 unbinds the driver itself; 1 only lets
 * a bind through. An override held already (a driver registering
 * meanwhile) is not written again at every look. `now' is what the
 * device is on after it. `changes': val is not the hold's value now.
 * 1: the hold's value changed; 0: it did not, or nothing was written.
 */
static int hold_write(struct rule *r, const char *val, int changes, const char *hold_path, char *now, struct fail *f)
{
	int ret;

	if (!changes && !(r->hold == OVERRIDE && !r->held))
		return 0;
	/*
	 * The store waits under the device lock for a probe that was
	 * running (a native driver on a device just added), which then
	 * binds whatever the hold says: a device that had no driver is
	 * read again after it, as is one that authorized 0 unbinds. One
	 * that had a driver keeps it.
	 */
	if ((ret = attr_store(look.hold, hold_path, val)) < 0)
		return fail(f, STEP_HOLD, ret);
	/* A member held anew, even one left without a driver, is its set's news: the line comes again. */
	if (r->in_set)
		rules[r->in_set - 1].said = 0;
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
	if (!now[0] && r->none && r->hold == OVERRIDE)
		drivers_probe(r);
	if ((!now[0] || r->hold == AUTHORIZED) && driver_now(r, now) < 0)
		return fail(f, STEP_LINK, -1);
	/*
	 * Another driver that bound meanwhile is the one to go back to; the
	 * rule's own, bound through the hold just written, is the move.
	 */
	if (now[0] && strcmp(now, r->s.drv))
		copy(r->orig, now);
	return changes;
}

/*
 * Steps 2 to 7 of a rule whose driver is there: nothing where it is on
 * it already; else hold, unbind, bind, verify, or roll back. The hold
 * is at `hold_path' and reads `hold_val'.
 */
static void rule_move(struct rule *r, const char *cur, const char *hold_val, const char *hold_path)
{
	const char *to = r->none ? "" : r->s.drv, *val = NULL;
	struct fail f;
	enum move how = OWN;
	char now[NAME_SZ];
	int failed = 0, held = 0, changes;

	/*
	 * driver_override "none" (a none rule's s.drv) or authorized 0
	 * keeps every driver away, also later ones; USB binds only an
	 * authorized interface.
	 */
	if (r->hold == OVERRIDE) {
		val = r->s.drv;
		how = OVERRIDDEN;
	} else if (r->hold == AUTHORIZED) {
		val = r->none ? "0" : "1";
		how = r->none ? BACK : OWN;
	}
	changes = val && strcmp(hold_val, val);
	/* A held override lets the kernel bind the driver as it registers, or unbind the old one as it goes. */
	if (!strcmp(cur, to) && !(r->none && changes)) {
		say_done(r, to, r->held || r->new_id_until ? MOVED : STAYED);
		return;
	}
	/* Looking again for a new_id, the device is unbound by the first look. */
	if (!r->new_id_until)
		copy(r->orig, cur);
	copy(now, cur);
	if (!flag[DRY]) {
		/* Looking again for a new_id to come: no bind until it is there. */
		if (r->new_id_until && !teachable(r)) {
			f.step = STEP_BIND;
			f.err = ENODEV;
			failed = 1;
		} else {
			held = hold_write(r, val, changes, hold_path, now, &f);
			failed = held < 0 || dev_move(r, to, how, look.bind, now, &f) < 0;
		}
		if (failed && refusal_waits(r, cur, &f))
			return;
		if (failed) {
			rule_fail(r, &f, now);
			return;
		}
	}
	say_done(r, to, strcmp(r->orig, to) ? MOVED : held > 0 ? HELD_UNBOUND : STAYED);
}

/*
 * Neither driver_override nor authorized: nothing keeps a driver away,
 * so a none rule watches its device until the deadline and unbinds any
 * driver that binds it meanwhile (the bind uevent brings the look).
 * Its outcome is said once; the rule stays WAITING until the deadline.
 */
static void rule_watch(struct rule *r, const char *cur)
{
	struct fail f;
	char now[NAME_SZ];
	int watching = r->wait == WATCHING;

	if (!watching)
		copy(r->orig, cur);
	/* A move BACK reads the driver link into `now' first. */
	if (cur[0] && !flag[DRY] && dev_move(r, "", BACK, -1, now, &f) < 0) {
		if (drv_registering(&f))
			wait_refused(r, watching ? WATCHING : FOR_DRIVER, &f);
		else
			rule_fail(r, &f, now);
		return;
	}
	if (watching) {
		if (cur[0])
			say(LOG_INFO, "%r: %s bound it; unbound again", r, cur);
		return;
	}
	say_done(r, "", cur[0] ? MOVED : STAYED);
	if (!flag[DRY]) {
		r->state = WAITING;
		r->wait = WATCHING;
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

/* Opens the device's attribute `attr' read-write as look.hold; 1 if it has one. */
static int hold_open(const struct rule *r, const char *attr, char *path)
{
	if (dev_path(path, r, attr) < 0)
		return 0;
	look.hold = look.dir >= 0 ? open_at(look.dir, attr, O_RDWR) : sys_open(path, O_RDWR);
	return look.hold >= 0 || errno != ENOENT;
}

/*
 * The device's directory, opened through the bus's link, proves the
 * device is there; its driver link, read now and again after the move,
 * and its hold are then one step from it. Where the bus is not known
 * yet, or the open fails, every path starts at the root. 1: there.
 */
static int dev_open(struct rule *r)
{
	char path[PATH_SZ];

	if (r->bus[0] && dev_path(path, r, "") == 0 && (look.dir = sys_open(path, O_PATH | O_DIRECTORY)) >= 0)
		return 1;
	return dev_find(r) > 0;
}

/*
 * Step 1: the driver's bind, open for the move. Missing: modprobe is
 * asked, and a device without a driver is held so that no native
 * driver takes it while its driver loads. 0: the driver is there.
 */
static int drv_open(struct rule *r, const char *cur, const char *hold_path)
{
	char path[PATH_SZ];

	/*
	 * The kernel makes a driver's directory before its bind file and
	 * sends the add uevent last: only the bind file says it is there.
	 */
	if (r->none || !strcmp(cur, r->s.drv) || node_path(path, r->bus, "/drivers/", r->s.drv, "bind") < 0 ||
	    (look.bind = sys_open(path, O_WRONLY)) >= 0 || errno != ENOENT)
		return 0;
	r->wait = FOR_DRIVER;
	/* A plan, not a failure: what it would wait for. */
	if (flag[DRY]) {
		/* A set says its plan in its own line; its members, with -v. */
		say(r->in_set ? LOG_DEBUG : LOG_INFO, "%r: would wait for %s (not loaded now), then move from %s", r, r->s.drv,
		    drv_or_none(cur));
		r->state = DONE;
		return -1;
	}
	drv_request(r);
	if (!cur[0] && r->hold && !r->held && conf.timeout &&
	    attr_store(look.hold, hold_path, r->hold == AUTHORIZED ? "0" : r->s.drv) == 0)
		mark_held(r);
	return -1;
}

/* One look at a rule: the device's driver and hold, the driver's bind, then the move. */
static void rule_look(struct rule *r)
{
	char cur[NAME_SZ], hold_path[PATH_SZ], hold_val[NAME_SZ];

	if (!dev_open(r))
		return;
	if (driver_now(r, cur) < 0) {
		say(LOG_ERR, "%r: cannot read driver link: %m", r);
		r->state = FAILED;
		return;
	}
	r->hold = hold_open(r, "driver_override", hold_path) ? OVERRIDE :
	    usb_intf(r) && hold_open(r, "authorized", hold_path) ? AUTHORIZED : UNHELD;
	/*
	 * Kept for the rollback, as the run's first look finds it: later
	 * looks may find the rule's own value, and a device plugged anew
	 * has its own. "(null)" is the kernel's word for unset, which the
	 * rollback writes back as "". A hold that cannot be read reads "".
	 */
	if (look.hold < 0 || fd_get(look.hold, hold_val, sizeof hold_val) < 0)
		hold_val[0] = '\0';
	if (!r->ovr_read) {
		copy(r->ovr, strcmp(hold_val, "(null)") ? hold_val : "");
		r->ovr_read = 1;
	}
	if (r->none && !r->hold)
		rule_watch(r, cur);
	else if (drv_open(r, cur, hold_path) == 0)
		rule_move(r, cur, hold_val, hold_path);
}

/*
 * The rule is applied again, from its first step, until `until': -f saw
 * its device or its driver come, or a bind or an unbind of the device.
 * What a look finds as it should be is not said again, and a device
 * gone meanwhile is not missed. Not inlined: its three callers would
 * each carry its dozen stores.
 */
__attribute__((noinline)) void rule_arm(struct rule *r, long long until)
{
	r->state = WAITING;
	r->wait = FOR_DEVICE;
	r->held = r->asked = r->looked = r->busid = r->gone = r->ovr_read = 0;
	r->refused.step = NO_STEP;
	r->new_id_until = 0;
	r->id[0] = r->orig[0] = '\0';
	r->said = r->absent_ok = 1;
	r->until = until;
}

void rule_step(struct rule *r)
{
	int keep;

	rule_look(r);
	/*
	 * A one-shot run looks no more at a rule that is over; a set's
	 * device beyond its limits has no slot, and there may be any
	 * number of them.
	 */
	keep = !flag[FOLLOW] && r->state != WAITING && !r->spare;
	look_end(&look.dir, keep);
	look_end(&look.hold, keep);
	look_end(&look.bind, keep);
}

/* A member of a set another member failed: back where it was. */
void rule_undo(struct rule *r)
{
	struct fail f;

	if (rollback(r, &f) < 0)
		say(LOG_ERR, "%r: rollback to %s failed at %s: %e", r, drv_or_none(r->orig), step_name(r, f.step), f.err);
	r->state = FAILED;
}

/* The deadline passed: say what is missing, and hand a held device back. */
void rule_expire(struct rule *r)
{
	char cur[NAME_SZ];

	if (r->wait == WATCHING) {
		r->state = DONE;
		return;
	}
	if (dev_find(r) <= 0) {
		/* Not missed: a device -f saw go, or that left its set. */
		if (r->state != FAILED && r->absent_ok) {
			r->state = DONE;
			r->gone = 1;
			return;
		}
		if (r->state != FAILED)
			say(LOG_ERR, "%r: device not found (waited %u s)", r, conf.timeout);
	} else if (r->refused.step) {
		rule_fail(r, &r->refused, "");
	} else {
		struct fail rb;

		/* The native driver may have a held device back: nothing is lost. */
		if (r->held)
			(void)rollback(r, &rb);
		(void)driver_now(r, cur);
		say(LOG_ERR, "%r: driver %s not found; %s%s%s (waited %u s)", r, r->s.drv,
		    r->held ? "now " : "stays ", cur[0] ? "on " : "unbound", cur, conf.timeout);
	}
	r->state = FAILED;
}
