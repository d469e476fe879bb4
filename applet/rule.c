/* SPDX-License-Identifier: MIT */
/*
 * The procedure of one rule, steps 2 to 7 of drvbind(8): look at the
 * device, hold it with driver_override or authorized, unbind, bind
 * (new_id where the driver does not know it), verify the driver link,
 * and roll back on any failure; watch a device nothing can hold; and at
 * the deadline, say what is missing and hand a held device back.
 * Calls device.c, sysfs.c, proc.c, log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "drvbind.h"

enum { BUSY_RETRIES = 3, NEW_ID_WAIT_MS = 1000 };

/* Not an errno: a check found the device on another driver, or none. */
enum { MISPLACED = -1 };

/* dev_move's fwd for a device whose driver_override names the new driver. */
enum { OVERRIDDEN = 2 };

/*
 * The rule is done: "BUS/DEV: OLD -> NEW" where the device moved, with
 * the id taught where new_id was needed, or that it stays on `to'
 * ("": none), unless that was said before.
 */
static void say_done(struct rule *r, const char *to, int moved)
{
	/* A set's member: with -v only; its set says one line for all. */
	int debug = r->set ? LOG_DEBUG : 0;

	r->state = DONE;
	if (!moved) {
		if (!r->quiet)
			say(LOG_INFO, "%r: %s%s%s", r, flag[DRY] ? "would stay " : "already ", *to ? "on " : "unbound", to);
		return;
	}
	if (debug)
		rules[r->set - 1].quiet = 0;

	say(MORE | debug, "%r: %s%s -> %s", r, flag[DRY] ? "would move " : "", drv_or_none(r->orig), drv_or_none(to));
	say(debug ? debug : LOG_INFO, r->id[0] ? " (new_id \"%s\")" : "", r->id);
}

static const char *hold_attr(const struct rule *r)
{
	return r->hold == AUTHORIZED ? "authorized" : "driver_override";
}

/*
 * A driver binds the devices present while it registers, before its
 * bind, unbind and new_id files exist and before its add uevent
 * (bus_add_driver, then driver_register). ENOENT from one of a driver's
 * files is a driver registering (or going away): the rule looks again
 * on the next uevent, and fails at the deadline only.
 */
static int drv_busy(const char *step)
{
	/* The driver's files among the steps: unbind, bind, new_id, match_busid. */
	return errno == ENOENT && step && (*step == 'u' || *step == 'b' || *step == 'n' || *step == 'm');
}

/*
 * Bind said ENODEV: the driver's id table does not have the device. Teach
 * it the device's id through new_id, bind unless the kernel already did
 * (it binds every unbound match on new_id, and a second bind says EBUSY),
 * then take the id back out so the driver does not grab other devices
 * with that id later.
 */
static const char *teach(struct rule *r)
{
	char id[sizeof r->id], cur[NAME_SZ];
	const char *step = NULL;
	int e;

	if (dev_id(r, id, sizeof id) < 0) {
		errno = ENODEV;
		return "bind";
	}
	if (drv_write(r, r->s.drv, "new_id", id) < 0)
		return "new_id";
	copy(r->id, id);
	if (rule_driver(r, cur) < 0)
		step = "driver link";
	else if (!cur[0] && drv_write(r, r->s.drv, "bind", r->s.dev) < 0 && errno != EBUSY)
		step = "bind";
	e = errno;
	/* Not every bus has remove_id (ENOENT): there the id stays. */
	if (drv_write(r, r->s.drv, "remove_id", id) < 0 && errno != ENOENT)
		say(LOG_WARNING, "%r: %s/remove_id \"%s\": %e", r, r->s.drv, id, errno);
	errno = e;
	return step;
}

/*
 * Can the driver be taught ids: has it new_id? A USB driver gets new_id
 * and then remove_id after its add uevent (usb_create_newid_files):
 * only remove_id says it has both.
 */
static int teachable(const struct rule *r, const char *drv)
{
	return drv_has(r, drv, r->hold == AUTHORIZED ? "remove_id" : "new_id");
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
 * Moves the device to `to' ("" for no driver): unbind, bind, then check
 * the driver link, since the success of a write is no proof (a probe
 * that binds nothing succeeds too). A native driver may still be probing
 * a device that just appeared: an unbind that says ENODEV or a bind that
 * says EBUSY means the device changed hands meanwhile, so look again.
 * fwd: the rule's own move, where match_busid and new_id apply (new_id
 * not with an override, OVERRIDDEN: that matches whatever the ids), and
 * `cur' holds the driver just read. `bind': the new driver's bind, open,
 * or -1 (every move but the rule's own). Returns NULL, or the failed
 * step with errno set (MISPLACED: on `cur').
 */
static const char *dev_move(struct rule *r, const char *to, int fwd, int bind, char *cur)
{
	int tries, e;

	for (tries = 0; tries < BUSY_RETRIES; tries++) {
		if ((tries || !fwd) && rule_driver(r, cur) < 0)
			return "driver link";
		if (!strcmp(cur, to))
			return NULL;
		if (cur[0] && drv_write(r, cur, "unbind", r->s.dev) < 0) {
			if (errno == ENODEV)
				continue;
			return "unbind";
		}
		if (!*to)
			continue;
		/* usbip-host takes only the USB devices listed in its match_busid. */
		if (fwd && !r->busid && !strcmp(r->bus, "usb") && drv_has(r, to, "match_busid")) {
			if (busid_write(r, "add ") < 0)
				return "match_busid";
			r->busid = 1;
		}
		if (drv_put(r, to, "bind", r->s.dev, bind) == 0)
			break;
		e = errno;
		if (fwd == 1 && e == ENODEV && teachable(r, to)) {
			const char *step = teach(r);
			if (step)
				return step;
			break;
		}
		errno = e;
		if (e != EBUSY || tries == BUSY_RETRIES - 1)
			return "bind";
	}
	if (rule_driver(r, cur) < 0)
		return "verify";
	errno = MISPLACED;
	return strcmp(cur, to) ? "verify" : NULL;
}

/*
 * Puts the device back as it was: the old override or authorized, the
 * old driver. A device that had a driver must not be left without one.
 */
static const char *rollback(struct rule *r)
{
	char cur[NAME_SZ], p[PATH_SZ];
	const char *step = NULL;

	if (r->busid) {
		r->busid = 0;
		(void)busid_write(r, "del ");
	}
	/* A zero-byte write never reaches sysfs; "\n" clears the override. */
	if (r->hold && dev_write(r, hold_attr(r), r->ovr[0] ? r->ovr : "\n") < 0)
		return hold_attr(r);
	if (r->orig[0] && (step = dev_move(r, r->orig, 0, -1, cur)) && errno == MISPLACED)
		errno = cur[0] ? EBUSY : ENODEV;
	/*
	 * A device held while its driver loaded had no driver only because
	 * of the hold; authorized=1 probes nothing, so ask drivers_probe.
	 */
	if (!r->orig[0] && r->held && node_path(p, r->bus, "/drivers_probe", "", NULL) == 0)
		(void)attr_write(p, r->s.dev);
	return step;
}

static const char rollback_failed[] = "; rollback to %s failed at %s: %e";

/* Reports the failure of a step and the rollback's result on one line. */
static void rule_fail(struct rule *r, const char *step, const char *cur)
{
	int err = errno, rerr;
	const char *rb;
	char now[NAME_SZ];

	/*
	 * The rollback goes by path: a device unplugged and plugged again
	 * during the look is a new directory, which the one open since
	 * (dev_look) no longer shows.
	 */
	dev_look(-1);
	rb = rollback(r);
	rerr = errno;

	/* Where it had no driver, the rollback's drivers_probe may have found one. */
	if (r->orig[0] || rule_driver(r, now) < 0)
		copy(now, r->orig);

	/* One line for both: /dev/kmsg keeps about ten lines in five seconds. */
	say(MORE, "%r: %s -> %s failed at %s: ", r, drv_or_none(r->orig), r->s.drv, step);
	if (err == MISPLACED)
		say(MORE, *cur ? "bound to %s" : "not bound", cur);
	else
		say(MORE, "%e", err);
	if (r->id[0])
		say(MORE, " after new_id \"%s\"", r->id);
	if (rb)
		say(LOG_ERR, rollback_failed, drv_or_none(now), rb, rerr);
	else
		say(LOG_ERR, r->orig[0] ? "; back on %s" : now[0] ? "; now on %s" : "; left unbound", now);
	r->state = FAILED;
}

/* The hold now keeps every other driver from the device until the rule ends. */
static void hold(struct rule *r)
{
	r->held = 1;
	say(LOG_DEBUG, "%r: held for %s by %s", r, r->s.drv, hold_attr(r));
}

/* The driver's files are not there yet: look again on its add uevent. */
static void wait_driver(struct rule *r, const char *step)
{
	r->err = ENOENT;
	r->step = step;
	say(LOG_DEBUG, "%r: %s: %e; waiting", r, step, ENOENT);
}

/*
 * Steps 3 to 7 of a rule: hold, unbind, bind, verify, or roll back.
 * The device's hold (r->hold) is at `hp', open as `hfd' (or -1), and
 * reads `hv'; `bind' is the new driver's bind, open (or -1).
 */
static void rule_move(struct rule *r, const char *cur, const char *hv, int hfd, const char *hp, int bind)
{
	const char *to = r->none ? "" : r->s.drv, *step = NULL, *val = NULL;
	char now[NAME_SZ], gone[PATH_SZ];
	int fwd = 1;

	/*
	 * driver_override "none" (a none rule's s.drv) or authorized 0
	 * keeps every driver away, also later ones; USB binds only an
	 * authorized interface.
	 */
	if (r->hold == OVERRIDE) {
		val = r->s.drv;
		fwd = OVERRIDDEN;
	} else if (r->hold == AUTHORIZED) {
		val = r->none ? "0" : "1";
		fwd = !r->none;
	}
	if (!strcmp(cur, to) && !(r->none && val && strcmp(hv, val))) {
		/*
		 * A held override lets the kernel bind the driver as it
		 * registers, or unbind the old one as it goes away.
		 */
		say_done(r, to, r->held || r->again);
		return;
	}
	/* Looking again for a new_id, the device is unbound by the first look. */
	if (!r->again)
		copy(r->orig, cur);
	copy(now, cur);
	if (!flag[DRY]) {
		/* Looking again for a new_id to come: no bind until it is there. */
		if (r->again && !teachable(r, to)) {
			errno = ENODEV;
			step = "bind";
		}
		/*
		 * authorized 0 unbinds the driver itself; 1 only lets a bind
		 * through. An override held already (a driver registering
		 * meanwhile) is not written again at every look.
		 */
		if (!step && val && ((r->hold == OVERRIDE && !r->held) || strcmp(hv, val))) {
			/*
			 * The store waits under the device lock for a probe
			 * that was running (a native driver on a device just
			 * added), which then binds whatever the hold says:
			 * what the device is on is read again after it
			 * (authorized 0 has unbound it by then).
			 */
			if (attr_put(hfd, hp, val) < 0)
				step = hold_attr(r);
			else if (rule_driver(r, now) < 0)
				step = "driver link";
			else if (now[0])
				copy(r->orig, now);
		}
		if (!step)
			step = dev_move(r, to, fwd, bind, now);
		/*
		 * A PCI remove releases the driver twice (pci_stop_dev, then
		 * device_del once the bus link is gone): a follower woken by
		 * the first binds a device on its way out, and the second
		 * undoes it. A device whose bus link went during the move is
		 * no failure of its rule: a follower looks again, and one
		 * added again is a new device.
		 */
		if (step && flag[FOLLOW] && dev_path(gone, r, "") == 0 && !sys_exists(gone)) {
			say(LOG_DEBUG, "%r: removed during the move", r);
			rule_arm(r, r->until);
			return;
		}
		/*
		 * Until the bus has finished adding a new device (PCI sets
		 * match_driver after the add uevent), bind says ENODEV even
		 * for the driver its override names, and then the kernel binds
		 * that driver itself. A device without a driver stays held so;
		 * at the deadline it is handed back.
		 */
		if (step && errno == ENODEV && !strcmp(step, "bind")) {
			if (r->hold == OVERRIDE && !cur[0]) {
				r->err = ENODEV;
				r->step = step;
				hold(r);
				return;
			}
			/*
			 * usb_register_driver makes new_id and remove_id after
			 * the driver's add uevent, and nothing announces them: a
			 * bind that the driver's table refuses before they are
			 * there is tried again soon, for NEW_ID_WAIT_MS at most
			 * (wait.c looks every SOON_MS).
			 */
			if (r->hold == AUTHORIZED && !r->none && !teachable(r, to)) {
				if (!r->again)
					r->again = now_ms() + NEW_ID_WAIT_MS;
				if (now_ms() < r->again) {
					r->err = ENODEV;
					r->step = step;
					return;
				}
				errno = ENODEV;
			}
		}
		if (drv_busy(step)) {
			r->held |= r->hold == OVERRIDE;
			wait_driver(r, step);
			return;
		}
		if (step) {
			rule_fail(r, step, now);
			return;
		}
	}
	say_done(r, to, strcmp(r->orig, to) != 0);
}

/*
 * Neither driver_override nor authorized: nothing keeps a driver away,
 * so a none rule watches its device until the deadline and unbinds any
 * driver that binds it meanwhile (the bind uevent brings the look).
 * Its outcome is said once; the rule stays pending until the deadline.
 */
static void rule_watch(struct rule *r, const char *cur)
{
	const char *step;
	char now[NAME_SZ];

	if (!r->watch)
		copy(r->orig, cur);
	copy(now, cur);
	if (cur[0] && !flag[DRY] && (step = dev_move(r, "", 0, -1, now))) {
		if (drv_busy(step))
			wait_driver(r, step);
		else
			rule_fail(r, step, now);
		return;
	}
	if (r->watch) {
		if (cur[0])
			say(LOG_INFO, "%r: %s bound it; unbound again", r, cur);
		return;
	}
	say_done(r, "", cur[0]);
	r->watch = !flag[DRY];
	r->state = r->watch ? WAITING : DONE;
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

/* Opens the device's attribute `attr' read-write into *fd; 1 if it has one. */
static int hold_open(const struct rule *r, const char *attr, char *p, int *fd)
{
	const char *at = p;
	int dirfd = dev_at(&at, attr);

	return dev_path(p, r, attr) == 0 && ((*fd = open_at(dirfd, at, O_RDWR)) >= 0 || errno != ENOENT);
}

/*
 * One look at a rule: the device's driver and hold, the driver's bind.
 * The hold and the bind stay open for the move (attr_put): fd[0] and
 * fd[1]; fd[2] is the device's directory.
 */
static void rule_look(struct rule *r, int *fd)
{
	char cur[NAME_SZ], dp[PATH_SZ], hp[PATH_SZ], bp[PATH_SZ], v[NAME_SZ] = "";
	int *hfd = &fd[0], *bind = &fd[1];

	/*
	 * The device's directory, opened through the bus's link, proves the
	 * device is there; its driver link, read now and again after the
	 * move, and its hold are then one step from it. Where the bus is
	 * not known yet, or the open fails, every path starts at the root.
	 */
	if (r->bus[0] && dev_path(dp, r, "") == 0 && (fd[2] = sys_open(dp, O_PATH | O_DIRECTORY)) >= 0)
		dev_look(fd[2]);
	else if (dev_find(r) <= 0)
		return;
	if (rule_driver(r, cur) < 0) {
		say(LOG_ERR, "%r: cannot read driver link: %e", r, errno);
		r->state = FAILED;
		return;
	}
	r->hold = hold_open(r, "driver_override", hp, hfd) ? OVERRIDE :
	    usb_intf(r) && hold_open(r, "authorized", hp, hfd) ? AUTHORIZED : UNHELD;
	/* Kept for the rollback, until the hold changes it; "(null)" is the kernel's word for unset. */
	if (*hfd >= 0 && fd_get(*hfd, v, sizeof v) == 0 && !r->held && strcmp(v, "(null)"))
		copy(r->ovr, v);
	if (r->none && !r->hold) {
		rule_watch(r, cur);
		return;
	}
	/*
	 * The kernel makes a driver's directory before its bind file and
	 * sends the add uevent last: only the bind file says it is there.
	 */
	if (!r->none && strcmp(cur, r->s.drv) && node_path(bp, r->bus, "/drivers/", r->s.drv, "bind") == 0 &&
	    (*bind = sys_open(bp, O_WRONLY)) < 0 && errno == ENOENT) {
		drv_request(r);
		/* Keep the native driver from taking the device while its driver loads. */
		if (!cur[0] && r->hold && !r->held && !flag[DRY] && conf.timeout &&
		    attr_put(*hfd, hp, r->hold == AUTHORIZED ? "0" : r->s.drv) == 0)
			hold(r);
		return;
	}
	rule_move(r, cur, v, *hfd, hp, *bind);
}

/*
 * The rule is applied again, from its first step, until `until': -f saw
 * its device or its driver come, or a bind or an unbind of the device.
 * What a look finds as it should be is not said again.
 */
void rule_arm(struct rule *r, long long until)
{
	r->state = WAITING;
	r->held = r->asked = r->busid = r->watch = r->err = r->gone = 0;
	r->again = 0;
	r->id[0] = r->orig[0] = '\0';
	r->quiet = 1;
	r->until = until;
}

void rule_step(struct rule *r)
{
	int fd[3] = { -1, -1, -1 }, i;

	rule_look(r, fd);
	dev_look(-1);
	/* A follower looks at its rules again and again: nothing stays open. */
	for (i = 0; i < 3; i++)
		if (fd[i] >= 0)
			fd_close(fd[i]);
}

/* A member of a set another member failed: back where it was. */
void rule_undo(struct rule *r)
{
	const char *step = rollback(r);

	if (step) {
		say(MORE, "%r: ", r);
		say(LOG_ERR, rollback_failed + 2, drv_or_none(r->orig), step, errno);
	}
	r->state = FAILED;
}

/* The deadline passed: say what is missing, and hand a held device back. */
void rule_expire(struct rule *r)
{
	char cur[NAME_SZ] = "";

	if (r->watch) {
		r->state = DONE;
		return;
	}
	if (dev_find(r) <= 0) {
		/*
		 * A device that -f saw go, or that left its set, is not
		 * missed: neither the rule nor its set failed.
		 */
		if (r->state != FAILED && r->quiet) {
			r->state = DONE;
			r->gone = 1;
			return;
		}
		if (r->state != FAILED)
			say(LOG_ERR, "%r: device not found (waited %u s)", r, conf.timeout);
	} else if (r->err) {
		errno = r->err;
		rule_fail(r, r->step, "");
	} else {
		/* The native driver may have a held device back: nothing is lost. */
		if (r->held)
			(void)rollback(r);
		(void)rule_driver(r, cur);
		say(LOG_ERR, "%r: driver %s not found; %s%s%s (waited %u s)", r, r->s.drv,
		    r->held ? "now " : "stays ", cur[0] ? "on " : "unbound", cur, conf.timeout);
	}
	r->state = FAILED;
}
