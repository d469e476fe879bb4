# drvbind - see README. Every variable can be overridden: make CC=... PREFIX=/usr
.POSIX:

VERSION   = 0.1
CC        = musl-gcc
HOSTCC    = cc
CFLAGS    = -Os -Wall -Wextra
LDFLAGS   =
PREFIX    = /usr/local
SBINDIR   = $(PREFIX)/sbin
MANDIR    = $(PREFIX)/share/man
DESTDIR   =
BATS      = bats
SIZE_MAX  = 16384

# What keeps the static binary small: a section per function for the
# linker to drop, no unwind tables, whole-program optimisation, and no
# page padding between code and data (common-page-size).
TINY_CFLAGS  = -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables \
               -fno-expensive-optimizations -fno-if-conversion \
               -fno-pie -fno-jump-tables -flto
TINY_LDFLAGS = -static -no-pie -s -Wl,--gc-sections -Wl,--build-id=none \
               -Wl,-z,noseparate-code -Wl,-z,norelro -Wl,-z,common-page-size=64

SRC  = applet/drvbind.c applet/parse.c
HDR  = applet/parse.h
TEST_BIN = build/test/fakesys build/test/uevent build/test/benchrun build/test/sysfsmagic.so

# The packages the tests use (Debian names); the product needs musl alone.
DEPS = musl-tools gcc make bats fuse3 libfuse3-dev pkg-config binutils \
       qemu-system-x86 busybox-static cpio kmod \
       strace valgrind gnuplot-nox driverctl dpdk usbip

all: build/drvbind

# Section headers are not needed to run a static binary: cut the file at
# the end of its last loaded segment and clear e_shoff/e_shnum/e_shstrndx.
build/drvbind: $(SRC) $(HDR)
	@mkdir -p build
	$(CC) $(TINY_CFLAGS) $(CFLAGS) $(TINY_LDFLAGS) $(LDFLAGS) -o $@.tmp $(SRC)
	@set -- $$(readelf -lW $@.tmp | awk '$$1 == "LOAD" { print $$2, $$5 }'); end=0; \
	while [ $$# -ge 2 ]; do e=$$(($$1 + $$2)); [ $$e -gt $$end ] && end=$$e; shift 2; done; \
	truncate -s $$end $@.tmp && \
	if [ "$$(od -An -tu1 -j4 -N1 $@.tmp | tr -d ' ')" = 2 ]; then at=40 n=8 sh=60; else at=32 n=4 sh=48; fi && \
	head -c $$n /dev/zero | dd of=$@.tmp bs=1 seek=$$at conv=notrunc 2>/dev/null && \
	head -c 4 /dev/zero | dd of=$@.tmp bs=1 seek=$$sh conv=notrunc 2>/dev/null
	@mv $@.tmp $@

# The prepend-anywhere initramfs: see initramfs/prepend.sh.
initramfs: build/drvbind.cpio

build/drvbind.cpio: build/drvbind initramfs/prepend.sh
	sh initramfs/prepend.sh build/drvbind $@

# The same sources linked with symbols kept, for `size` and the no-heap test.
build/drvbind.syms: $(SRC) $(HDR)
	@mkdir -p build
	$(CC) $(TINY_CFLAGS) $(CFLAGS) -static -no-pie -Wl,--gc-sections $(LDFLAGS) -o $@ $(SRC)

size: build/drvbind build/drvbind.syms
	@echo "build/drvbind: $$(wc -c < build/drvbind) bytes (budget $(SIZE_MAX))"
	@echo "largest symbols:"
	@nm -S --size-sort build/drvbind.syms | awk '$$3 !~ /[bB]/' | tail -12 | \
	while read a s t n; do printf '  %6d %s\n' $$((0x$$s)) $$n; done

build/test/fakesys: test/fake/fakesys.c test/fake/uevent.h
	@mkdir -p build/test
	$(HOSTCC) -O2 -Wall -Wextra -o $@ test/fake/fakesys.c $$(pkg-config --cflags --libs fuse3)

build/test/uevent: test/fake/uevent.c test/fake/uevent.h
	@mkdir -p build/test
	$(HOSTCC) -O2 -Wall -Wextra -o $@ test/fake/uevent.c

# Static (musl), so that its own pages barely count in the peak RSS it
# measures; the uapi headers come after musl's own.
build/test/benchrun: test/bench/benchrun.c test/fake/uevent.h
	@mkdir -p build/test
	$(CC) -static -O2 -Wall -Wextra -idirafter /usr/include \
		-idirafter /usr/include/$$($(HOSTCC) -dumpmachine) -o $@ test/bench/benchrun.c

build/test/sysfsmagic.so: test/bench/sysfsmagic.c
	@mkdir -p build/test
	$(HOSTCC) -O2 -Wall -Wextra -shared -fPIC -o $@ test/bench/sysfsmagic.c -ldl

deps:
	@missing=; for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" != 0 ]; then echo "make deps: missing Debian packages; as root run: apt-get install$$missing" >&2; exit 1; fi; \
	echo "make deps: installing$$missing"; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing || \
	{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; }

check: deps
	$(MAKE) all build/drvbind.syms build/drvbind.cpio $(TEST_BIN)
	$(BATS) test

# drvbind against driverctl, dpdk-devbind.py, usbip and a boot script:
# test/bench/RESULTS.md and its charts (slow: minutes, one QEMU boot).
bench: deps
	$(MAKE) all build/drvbind.cpio $(TEST_BIN)
	test/bench/bench.sh

demo: deps
	sh test/qemu/demo.sh

demo-fake: deps
	$(MAKE) all $(TEST_BIN)
	bash test/demo.sh

install: build/drvbind
	mkdir -p $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8
	cp build/drvbind $(DESTDIR)$(SBINDIR)/drvbind
	chmod 755 $(DESTDIR)$(SBINDIR)/drvbind
	cp applet/drvbind.8 $(DESTDIR)$(MANDIR)/man8/drvbind.8
	chmod 644 $(DESTDIR)$(MANDIR)/man8/drvbind.8

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/drvbind $(DESTDIR)$(MANDIR)/man8/drvbind.8

clean:
	rm -rf build

.PHONY: all initramfs size deps check bench demo demo-fake install uninstall clean
