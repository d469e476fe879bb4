/*
 * The procedure of one rule, steps 2 to 7 of drvbind(8): look at the
 * device, hold it with driver_override, unbind, bind (new_id where the
 * driver does not know it), verify the driver link, and roll back on any
 * failure; and at the deadline, say what is missing and hand a held
 * device back. Calls device.c, sysfs.c, log.c and mem.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "drvbind.h"

enum {
	SETTLE_MS = 500,	/* how long an unbound device may still be probed */
	BUSY_RETRIES = 3,
};

/* Not an errno: a check found the device on another driver, or none. */
enum { MISPLACED = -1 };

/* dev_move's fwd for a device whose driver_override names the new driver. */
enum { OVERRIDDEN = 2 };

/* "BUS/DEV: OLD -> NEW", with the id taught where new_id was needed. */
static void say_moved(struct rule *r, const char *to)
{
	say(MORE, "%r: %s%s -> %s", r, flag[DRY] ? "would move " : "", drv_or_none(r->orig), to);
	say(LOG_INFO, r->id[0] ? " (new_id \"%s\")" : "", r->id);
	r->state = DONE;
}

static void say_stays(struct rule *r, const char *drv)
{
	say(LOG_INFO, "%r: %s%s%s", r, flag[DRY] ? "would stay " : "already ", *drv ? "on " : "unbound", drv);
	r->state = DONE;
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
	if (dev_driver(r->bus, r->s.dev, cur) < 0)
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
 * not with an override, OVERRIDDEN: that matches whatever the ids); `cur'
 * holds the driver just read and `bind' is the new driver's bind, open.
 * Returns NULL, or the failed step with errno set (MISPLACED: on `cur').
 */
static const char *dev_move(struct rule *r, const char *to, int fwd, int bind, char *cur)
{
	int tries, e;

	for (tries = 0; tries < BUSY_RETRIES; tries++) {
		if ((tries || !fwd) && dev_driver(r->bus, r->s.dev, cur) < 0)
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
		if (drv_put(r, to, "bind", r->s.dev, fwd ? bind : -1) == 0)
			break;
		e = errno;
		if (fwd == 1 && e == ENODEV && drv_has(r, to, "new_id")) {
			const char *step = teach(r);
			if (step)
				return step;
			break;
		}
		errno = e;
		if (e != EBUSY || tries == BUSY_RETRIES - 1)
			return "bind";
	}
	if (dev_driver(r->bus, r->s.dev, cur) < 0)
		return "verify";
	errno = MISPLACED;
	return strcmp(cur, to) ? "verify" : NULL;
}

/*
 * Puts the device back as it was: the old override, the old driver. A
 * device that had a driver must not be left without one.
 */
static const char *rollback(struct rule *r, int ovr)
{
	char cur[NAME_SZ], p[PATH_SZ];
	const char *step = NULL;

	if (r->busid) {
		r->busid = 0;
		(void)busid_write(r, "del ");
	}
	/* A zero-byte write never reaches sysfs; "\n" clears the override. */
	if (ovr && dev_write(r, "driver_override", r->ovr[0] ? r->ovr : "\n") < 0)
		return "driver_override";
	if (r->orig[0] && (step = dev_move(r, r->orig, 0, -1, cur)) && errno == MISPLACED)
		errno = cur[0] ? EBUSY : ENODEV;
	/* A device held while its driver loaded had no driver only because of the hold. */
	if (!r->orig[0] && r->held && node_path(p, r->bus, "/drivers_probe", "", NULL) == 0)
		(void)attr_write(p, r->s.dev);
	return step;
}

/* Reports the failure of a step and the rollback's result on one line. */
static void rule_fail(struct rule *r, const char *step, const char *cur, int ovr)
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
	rb = rollback(r, ovr);
	rerr = errno;

	/* Where it had no driver, the rollback's drivers_probe may have found one. */
	if (r->orig[0] || dev_driver(r->bus, r->s.dev, now) < 0)
		copy(now, r->orig);

	/* One line for both: /dev/kmsg keeps about ten lines in five seconds. */
	say(MORE, "%r: %s -> %s failed at %s: ", r, drv_or_none(r->orig), r->none ? "none" : r->s.drv, step);
	if (err == MISPLACED)
		say(MORE, *cur ? "bound to %s" : "not bound", cur);
	else
		say(MORE, "%e", err);
	if (r->id[0])
		say(MORE, " after new_id \"%s\"", r->id);
	if (rb)
		say(LOG_ERR, "; rollback to %s failed at %s: %e", now, rb, rerr);
	else
		say(LOG_ERR, r->orig[0] ? "; back on %s" : now[0] ? "; now on %s" : "; left unbound", now);
	r->state = FAILED;
}

/* The override now keeps every other driver from the device until the rule ends. */
static void hold(struct rule *r)
{
	r->held = 1;
	say(LOG_DEBUG, "%r: held for %s by driver_override", r, r->s.drv);
}

/*
 * Steps 3 to 7 of a rule: override, unbind, bind, verify, or roll back.
 * ovr: the device has driver_override, at `op', open as `ofd' (or -1);
 * `bind' is the new driver's bind, open (or -1).
 */
static void rule_move(struct rule *r, const char *cur, int ovr, int ofd, const char *op, int bind)
{
	const char *to = r->none ? "" : r->s.drv, *step;
	char now[NAME_SZ];

	/* "none" in driver_override keeps every driver away, also later ones. */
	if (!strcmp(cur, to) && !(r->none && ovr && strcmp(r->ovr, "none"))) {
		/* A held override lets the kernel bind the driver as it registers. */
		if (r->held)
			say_moved(r, to);
		else
			say_stays(r, to);
		return;
	}
	copy(r->orig, cur);
	copy(now, cur);
	if (!flag[DRY]) {
		if (ovr && attr_put(ofd, op, r->none ? "none" : to) < 0)
			step = "driver_override";
		else
			step = dev_move(r, to, ovr ? OVERRIDDEN : 1, bind, now);
		/*
		 * Until the bus has finished adding a new device (PCI sets
		 * match_driver after the add uevent), bind says ENODEV even
		 * for the driver its override names, and then the kernel binds
		 * that driver itself. A device without a driver stays held so;
		 * at the deadline it is handed back.
		 */
		if (step && ovr && !cur[0] && errno == ENODEV && !strcmp(step, "bind")) {
			r->err = ENODEV;
			hold(r);
			return;
		}
		if (step) {
			rule_fail(r, step, now, ovr);
			return;
		}
	}
	if (strcmp(cur, to))
		say_moved(r, drv_or_none(to));
	else
		say_stays(r, to);
}

/*
 * One look at a rule: the device's driver and override, the driver's
 * bind. The override and the bind stay open for the move (attr_put):
 * fd[0] and fd[1]; fd[2] is the device's directory.
 */
static void rule_look(struct rule *r, long long now, int *fd)
{
	char cur[NAME_SZ], dp[PATH_SZ], op[PATH_SZ], bp[PATH_SZ], v[NAME_SZ] = "";
	const char *at = op;
	int *ofd = &fd[0], *bind = &fd[1], ovr, dirfd;

	/*
	 * The device's directory, opened through the bus's link, proves the
	 * device is there; its driver link, read now and again after the
	 * move, and its override are then one step from it. Where the bus is
	 * not known yet, or the open fails, every path starts at the root.
	 */
	if (r->bus[0] && dev_path(dp, r, "") == 0 && (fd[2] = sys_open(dp, O_PATH | O_DIRECTORY)) >= 0)
		dev_look(fd[2]);
	else if (dev_find(r) <= 0)
		return;
	if (dev_driver(r->bus, r->s.dev, cur) < 0) {
		say(LOG_ERR, "%r: cannot read driver link: %e", r, errno);
		r->state = FAILED;
		return;
	}
	dirfd = dev_at(&at, "driver_override");
	ovr = dev_path(op, r, "driver_override") == 0 &&
	    ((*ofd = open_at(dirfd, at, O_RDWR)) >= 0 || errno != ENOENT);
	/* Kept for the rollback, until the hold changes it; "(null)" is the kernel's word for unset. */
	if (*ofd >= 0 && fd_get(*ofd, v, sizeof v) == 0 && !r->held && strcmp(v, "(null)"))
		copy(r->ovr, v);
	if (r->none && !cur[0] && !ovr && !flag[DRY]) {
		/*
		 * No driver_override on this bus: an unbound device that has
		 * just appeared may still be probed by its native driver a
		 * moment after its add event. Only a quiet settle time proves
		 * that it stays unbound; a bind meanwhile is undone on the
		 * next look, which the bind's uevent brings.
		 */
		if (!r->settle_at)
			r->settle_at = now + SETTLE_MS;
		if (now >= r->settle_at)
			say_stays(r, "");
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
		if (!cur[0] && ovr && !r->held && !flag[DRY] && conf.timeout && attr_put(*ofd, op, r->s.drv) == 0)
			hold(r);
		return;
	}
	rule_move(r, cur, ovr, *ofd, op, *bind);
}

void rule_step(struct rule *r, long long now)
{
	int fd[3] = { -1, -1, -1 }, i;

	rule_look(r, now, fd);
	dev_look(-1);
	/*
	 * A rule that has ended leaves its three files to exit, which
	 * closes them all at once (RULES_MAX rules, three each, at most);
	 * one that waits on closes them, and opens them again next time.
	 */
	if (r->state == WAITING)
		for (i = 0; i < 3; i++)
			if (fd[i] >= 0)
				fd_close(fd[i]);
}

/* The deadline passed: say what is missing, and hand a held device back. */
void rule_expire(struct rule *r)
{
	char cur[NAME_SZ] = "";

	if (r->settle_at) {
		say_stays(r, "");
		return;
	}
	if (dev_find(r) <= 0) {
		if (r->state != FAILED)
			say(LOG_ERR, "%r: device not found (waited %u s)", r, conf.timeout);
	} else if (r->err) {
		errno = r->err;
		rule_fail(r, "bind", "", 1);
	} else {
		/* The native driver may have a held device back: nothing is lost. */
		if (r->held)
			(void)rollback(r, 1);
		(void)dev_driver(r->bus, r->s.dev, cur);
		say(LOG_ERR, "%r: driver %s not found; %s%s%s (waited %u s)", r, r->s.drv,
		    r->held ? "now " : "stays ", cur[0] ? "on " : "unbound", cur, conf.timeout);
	}
	r->state = FAILED;
}
