/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD=sysfsmagic.so: statfs64 and fstatfs64 answer SYSFS_MAGIC
 * for a FUSE mount. libudev (systemd's sd-device) refuses any /sys that
 * is not sysfs by its magic number, so without this usbip would not
 * even look at the fake kernel; nothing else about it changes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/vfs.h>

enum { FUSE_MAGIC = 0x65735546, SYSFS_MAGIC = 0x62656572 };

int fstatfs64(int fd, struct statfs64 *st)
{
	static int (*real)(int, struct statfs64 *);
	int r;

	if (!real)
		real = (int (*)(int, struct statfs64 *))dlsym(RTLD_NEXT, "fstatfs64");
	r = real(fd, st);
	if (!r && st->f_type == FUSE_MAGIC)
		st->f_type = SYSFS_MAGIC;
	return r;
}

int statfs64(const char *path, struct statfs64 *st)
{
	static int (*real)(const char *, struct statfs64 *);
	int r;

	if (!real)
		real = (int (*)(const char *, struct statfs64 *))dlsym(RTLD_NEXT, "statfs64");
	r = real(path, st);
	if (!r && st->f_type == FUSE_MAGIC)
		st->f_type = SYSFS_MAGIC;
	return r;
}
