# SPDX-License-Identifier: MIT
# drvbind - see README. Every variable can be overridden: make CC=... PREFIX=/usr
.POSIX:

VERSION   = 0.1
# ARCH selects a cross build into build/ARCH/ with Debian's cross gcc and
# musl (make deps installs them): make ARCH=arm64, make ARCH=armhf.
# Empty: the host's musl-gcc into build/.
ARCH      =
CC_       = musl-gcc
CC_arm64  = aarch64-linux-gnu-gcc -specs /usr/lib/aarch64-linux-musl/musl-gcc.specs
CC_armhf  = arm-linux-gnueabihf-gcc -specs /usr/lib/arm-linux-musleabihf/musl-gcc.specs
CC        = $(CC_$(ARCH))
NM_       = nm
NM_arm64  = aarch64-linux-gnu-nm
NM_armhf  = arm-linux-gnueabihf-nm
NM        = $(NM_$(ARCH))
# qemu-user runs a cross binary for the fake-kernel tests (check-cross).
RUN_arm64 = qemu-aarch64-static
RUN_armhf = qemu-arm-static
RUN       = $(RUN_$(ARCH))
O_        = build
O_arm64   = build/arm64
O_armhf   = build/armhf
O         = $(O_$(ARCH))
HOSTCC    = cc
CFLAGS    = -Os -Wall -Wextra
LDFLAGS   =
PREFIX    = /usr/local
SBINDIR   = $(PREFIX)/sbin
MANDIR    = $(PREFIX)/share/man
DATADIR   = $(PREFIX)/share/drvbind
DESTDIR   =
# Where each initramfs builder reads its hooks: fixed paths, whatever PREFIX.
ITOOLSDIR = /usr/share/initramfs-tools
DRACUTDIR = /usr/lib/dracut/modules.d/90drvbind
CPIODIR   = /usr/lib/initcpio
UNITDIR   = /usr/lib/systemd/system
BATS      = bats
SIZE_MAX  = 24576
# musl's own start file: see TINY_LDFLAGS.
CRT1_     = /usr/lib/x86_64-linux-musl/crt1.o
CRT1_arm64 = /usr/lib/aarch64-linux-musl/crt1.o
CRT1_armhf = /usr/lib/arm-linux-musleabihf/crt1.o
CRT1      = $(CRT1_$(ARCH))
CLANG     = clang
# Seconds of fuzzing per parser: make fuzz, and the short run in make check.
FUZZ_TIME = 300
CHECK_FUZZ_TIME = 15

# What keeps the static binary small: a section per function for the
# linker to drop, no unwind tables, whole-program optimisation, a few
# optimisations that trade size for speed turned off, no page padding
# between code and data (common-page-size; max-page-size, or arm64's
# 64 KiB default pads the file to 64 KiB), and applet/tiny.ld, which the
# linker inserts into its default script (no .eh_frame, libc packed).
# The program starts from musl's crt1.o alone: gcc's crtbegin/crtend
# only register C++ constructors and unwind tables, and bring both along.
TINY_CFLAGS  = -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables \
               -fno-expensive-optimizations -fno-if-conversion -fno-move-loop-invariants \
               -fno-ipa-cp -fno-ipa-modref -fno-pie -fno-jump-tables -flto $(TINY_CFLAGS_$(ARCH))
# arm64: the tiny code model (all of the program within 1 MiB) makes an
# address one instruction instead of two (832 bytes); no frame pointer,
# which gcc keeps there by default (256); conditional selects, which cost
# bytes on x86-64 and save them here; and neither guessed branch
# probabilities (which lay out the likely path at the cost of jumps) nor
# shrink-wrapping (prologues moved into branches), 64 bytes together.
TINY_CFLAGS_arm64 = -mcmodel=tiny -fomit-frame-pointer -fif-conversion \
                    -fno-guess-branch-probability -fno-shrink-wrap
TINY_LDFLAGS = -static -no-pie -s -nostartfiles -Wl,--gc-sections -Wl,--build-id=none \
               -Wl,-z,noseparate-code -Wl,-z,norelro -Wl,-z,common-page-size=64 \
               -Wl,-z,max-page-size=4096 -Wl,-T,applet/tiny.ld

# Bottom-up, as applet/drvbind.h lists them; one link, with LTO.
SRC  = applet/mem.c applet/parse.c applet/log.c applet/sysfs.c applet/proc.c \
       applet/conf.c applet/device.c applet/rule.c applet/set.c applet/place.c applet/notify.c \
       applet/wait.c applet/list.c applet/pid1.c applet/main.c
HDR  = applet/drvbind.h applet/parse.h
TEST_BIN = build/test/fakesys build/test/uevent build/test/benchrun build/test/sysfsmagic.so build/test/knock
# The cross architectures make check builds, boots and tests, and the
# bats files whose cases check the binary itself on each of them.
CROSS    = arm64 armhf
CROSS_TESTS = test/build.bats test/rules.bats test/bind.bats test/wait.bats test/register.bats \
              test/sets.bats

# The packages the tests use (Debian names); the product needs musl alone.
# initramfs-tools and dracut-core (not dracut, which conflicts with
# initramfs-tools) are the real builders the initramfs tests run; udev and
# systemd go into their images; zstd unpacks them; runit's runsv runs the
# follower's service in follow.bats. The :arm64 and :armhf
# ones, for the cross builds, need `dpkg --add-architecture`, done by deps.
DEPS = musl-tools gcc make bats fuse3 libfuse3-dev pkg-config binutils \
       qemu-system-x86 busybox-static cpio kmod \
       initramfs-tools dracut-core udev systemd zstd e2fsprogs shellcheck \
       clang libclang-rt-14-dev valgrind cppcheck clang-tidy strace \
       gnuplot-nox driverctl dpdk usbip runit \
       gcc-aarch64-linux-gnu musl-dev:arm64 gcc-arm-linux-gnueabihf musl-dev:armhf \
       qemu-user-static qemu-system-arm socat
FOREIGN = arm64 armhf


# The sanitizer builds: the same sources, with every report fatal.
ASAN_CFLAGS  = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
UBSAN_CFLAGS = -Os -g -fsanitize=undefined -fsanitize-undefined-trap-on-error
FUZZ_TARGETS = cmdline rule uevent

all: $(O)/drvbind

# The packages' recipes (initramfs/pkg/): each .mk there adds its make
# targets (make deb, ...) and the Debian packages its tests need to DEPS.
include $(sort $(wildcard initramfs/pkg/*.mk))

# Section headers are not needed to run a static binary: applet/elfcut.sh.
$(O)/drvbind: $(SRC) $(HDR) applet/tiny.ld applet/elfcut.sh
	@[ -n "$(O)" ] || { echo "make: ARCH=$(ARCH): not one of: $(CROSS)" >&2; exit 1; }
	@mkdir -p $(O)
	$(CC) $(TINY_CFLAGS) $(CFLAGS) $(TINY_LDFLAGS) $(LDFLAGS) -o $@.tmp $(CRT1) $(SRC)
	@sh applet/elfcut.sh $@.tmp
	@mv $@.tmp $@

# The prepend-anywhere initramfs: see initramfs/prepend.sh.
initramfs: $(O)/drvbind.cpio

$(O)/drvbind.cpio: $(O)/drvbind initramfs/prepend.sh
	sh initramfs/prepend.sh $(O)/drvbind $@

# The same sources linked with symbols kept, for `size` and the no-heap test.
$(O)/drvbind.syms: $(SRC) $(HDR) applet/tiny.ld
	@mkdir -p $(O)
	$(CC) $(TINY_CFLAGS) $(CFLAGS) -static -no-pie -nostartfiles -Wl,--gc-sections \
		-Wl,-z,max-page-size=4096 -Wl,-T,applet/tiny.ld $(LDFLAGS) -o $@ $(CRT1) $(SRC)

# Every architecture built so far, then the largest symbols of this one.
size: $(O)/drvbind $(O)/drvbind.syms
	@for f in build/drvbind build/*/drvbind; do [ -f "$$f" ] || continue; \
	echo "$$f: $$(wc -c < $$f) bytes (budget $(SIZE_MAX))"; done
	@echo "largest symbols ($(O)/drvbind):"
	@$(NM) -S --size-sort $(O)/drvbind.syms | awk '$$3 !~ /[bB]/' | tail -12 | \
	while read a s t n; do printf '  %6d %s\n' $$((0x$$s)) $$n; done

build/test/fakesys: test/fake/fakesys.c test/fake/uevent.h
	@mkdir -p build/test
	$(HOSTCC) -O2 -Wall -Wextra -o $@ test/fake/fakesys.c $$(pkg-config --cflags --libs fuse3)

build/test/uevent: test/fake/uevent.c test/fake/uevent.h
	@mkdir -p build/test
	$(HOSTCC) -O2 -Wall -Wextra -o $@ test/fake/uevent.c

# clang against glibc, dynamic, AddressSanitizer and UBSan.
build/asan/drvbind: $(SRC) $(HDR)
	@mkdir -p build/asan
	$(CLANG) $(ASAN_CFLAGS) -Wall -Wextra -Werror -o $@ $(SRC)

# The musl static build, where UBSan traps (no runtime to print with).
build/ubsan/drvbind: $(SRC) $(HDR)
	@mkdir -p build/ubsan
	$(CC) $(UBSAN_CFLAGS) -Wall -Wextra -Werror -static -o $@ $(SRC)

# One libFuzzer binary per parser of applet/parse.c (str_len: applet/mem.c).
build/fuzz/cmdline build/fuzz/rule build/fuzz/uevent: test/fuzz/parse_fuzz.c applet/parse.c applet/mem.c $(HDR)
	@mkdir -p build/fuzz
	$(CLANG) $(ASAN_CFLAGS) -fsanitize=fuzzer -Wall -Wextra -Werror \
		-DTARGET_$$(basename $@ | tr a-z A-Z) -o $@ test/fuzz/parse_fuzz.c applet/parse.c applet/mem.c

# The compiler and nm for ARCH, for the tests.
print-cc:
	@echo $(CC)

print-nm:
	@echo $(NM)

# Static (the host's musl, whatever ARCH), so that its own pages barely
# count in the peak RSS it measures; the uapi headers come after musl's own.
build/test/benchrun: test/bench/benchrun.c test/fake/uevent.h
	@mkdir -p build/test
	$(CC_) -static -O2 -Wall -Wextra -idirafter /usr/include \
		-idirafter /usr/include/$$($(HOSTCC) -dumpmachine) -o $@ test/bench/benchrun.c

# Static with musl: the lockdown boot's guest knocks with it (test/qemu/run.sh).
build/test/knock: test/fake/knock.c
	@mkdir -p build/test
	$(CC_) -static -Os -Wall -Wextra -o $@ test/fake/knock.c

build/test/sysfsmagic.so: test/bench/sysfsmagic.c
	@mkdir -p build/test
	$(HOSTCC) -O2 -Wall -Wextra -shared -fPIC -o $@ test/bench/sysfsmagic.c -ldl

deps:
	@have=$$(dpkg --print-foreign-architectures); for a in $(FOREIGN); do \
	case " $$(echo $$have) " in *" $$a "*) continue ;; esac; \
	if [ "$$(id -u)" != 0 ]; then echo "make deps: as root run: dpkg --add-architecture $$a" >&2; exit 1; fi; \
	echo "make deps: dpkg --add-architecture $$a"; dpkg --add-architecture $$a && apt-get update || exit 1; done
	@missing=; for p in $(DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" != 0 ]; then echo "make deps: missing Debian packages; as root run: apt-get install$$missing" >&2; exit 1; fi; \
	echo "make deps: installing$$missing"; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing || \
	{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; }

check: deps
	$(MAKE) all build/drvbind.syms build/drvbind.cpio $(TEST_BIN)
	for a in $(CROSS); do $(MAKE) ARCH=$$a all build/$$a/drvbind.syms build/$$a/drvbind.cpio || exit 1; done
	$(BATS) test
	$(MAKE) check-asan check-ubsan
	$(MAKE) fuzz FUZZ_TIME=$(CHECK_FUZZ_TIME)
	st=0; for a in $(CROSS); do $(MAKE) ARCH=$$a check-cross || st=1; done; exit $$st

# The binary's own cases once more, for a cross build run by qemu-user.
check-cross: all $(O)/drvbind.syms $(TEST_BIN)
	DRVBIND=$(O)/drvbind DRVBIND_RUN=$(RUN) DRVBIND_ARCH=$(ARCH) $(BATS) $(CROSS_TESTS)

# The fake-kernel suite (the files that run the binary on the fake
# kernel; not the QEMU tiers, nor the initramfs builders) on a sanitizer
# build. ASan and UBSan also report from background children into
# build/asan/log; any report there fails the run. No leak check: there
# is no heap to leak, and LeakSanitizer cannot run under strace. The
# follower's endurance run goes 100 cycles there, not 1000.
FAKE_TESTS = test/build.bats test/fake.bats test/rules.bats test/bind.bats test/wait.bats \
             test/register.bats test/follow.bats test/hostile.bats test/faults.bats test/analysis.bats \
             test/sets.bats test/trust.bats test/notify.bats

check-asan: deps
	$(MAKE) all build/drvbind.syms build/asan/drvbind $(TEST_BIN)
	@rm -rf build/asan/log && mkdir -p build/asan/log
	st=0; ASAN_OPTIONS=detect_leaks=0:log_path=$$PWD/build/asan/log/asan \
		UBSAN_OPTIONS=print_stacktrace=1:log_path=$$PWD/build/asan/log/ubsan \
		DRVBIND=$$PWD/build/asan/drvbind FOLLOW_CYCLES=100 $(BATS) $(FAKE_TESTS) || st=$$?; \
	if [ -n "$$(ls build/asan/log)" ]; then cat build/asan/log/*; echo "check-asan: sanitizer reports above" >&2; st=1; fi; \
	exit $$st

check-ubsan: deps
	$(MAKE) all build/drvbind.syms build/ubsan/drvbind $(TEST_BIN)
	DRVBIND=$$PWD/build/ubsan/drvbind FOLLOW_CYCLES=100 $(BATS) $(FAKE_TESTS)

# Replays the committed corpus (test/fuzz/corpus/TARGET, every past
# finding among it), then fuzzes each parser for FUZZ_TIME seconds.
fuzz: deps
	$(MAKE) $(FUZZ_TARGETS:%=build/fuzz/%)
	sh test/fuzz/run.sh $(FUZZ_TIME) $(FUZZ_TARGETS)

# drvbind against driverctl, dpdk-devbind.py, usbip and a boot script,
# and drvbind -f through replugs beside driverctl's load-override
# (test/bench/follow.sh): test/bench/RESULTS.md and its charts (slow:
# minutes, one QEMU boot).
bench: deps
	$(MAKE) all build/drvbind.cpio $(TEST_BIN)
	test/bench/bench.sh

demo: deps
	sh test/qemu/demo.sh

demo-fake: deps
	$(MAKE) all $(TEST_BIN)
	bash test/demo.sh

# The initramfs files name the installed binary and modules.sh: the
# paths are filled in as they are installed.
SUBST = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' -e 's|@UNITDIR@|$(UNITDIR)|g'

install: $(O)/drvbind
	mkdir -p $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(DATADIR) $(DESTDIR)$(ITOOLSDIR)/hooks $(DESTDIR)$(ITOOLSDIR)/scripts/init-top \
		$(DESTDIR)$(DRACUTDIR) $(DESTDIR)$(CPIODIR)/install $(DESTDIR)$(CPIODIR)/hooks \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(DATADIR)/runit/drvbind-follow
	cp $(O)/drvbind $(DESTDIR)$(SBINDIR)/drvbind
	cp applet/drvbind.8 $(DESTDIR)$(MANDIR)/man8/drvbind.8
	cp applet/drvbind.conf.5 $(DESTDIR)$(MANDIR)/man5/drvbind.conf.5
	cp initramfs/modules.sh $(DESTDIR)$(DATADIR)/modules.sh
	$(SUBST) initramfs/initramfs-tools/hook > $(DESTDIR)$(ITOOLSDIR)/hooks/drvbind
	cp initramfs/initramfs-tools/init-top $(DESTDIR)$(ITOOLSDIR)/scripts/init-top/drvbind
	$(SUBST) initramfs/dracut/module-setup.sh > $(DESTDIR)$(DRACUTDIR)/module-setup.sh
	cp initramfs/dracut/drvbind.sh $(DESTDIR)$(DRACUTDIR)/drvbind.sh
	$(SUBST) initramfs/mkinitcpio/install > $(DESTDIR)$(CPIODIR)/install/drvbind
	cp initramfs/mkinitcpio/hook $(DESTDIR)$(CPIODIR)/hooks/drvbind
	cp initramfs/drvbind.service $(DESTDIR)$(UNITDIR)/drvbind.service
	$(SUBST) initramfs/drvbind-follow.service > $(DESTDIR)$(UNITDIR)/drvbind-follow.service
	$(SUBST) initramfs/inittab > $(DESTDIR)$(DATADIR)/inittab
	$(SUBST) initramfs/runit/drvbind-follow/run > $(DESTDIR)$(DATADIR)/runit/drvbind-follow/run
	chmod 755 $(DESTDIR)$(SBINDIR)/drvbind $(DESTDIR)$(DATADIR)/runit/drvbind-follow/run \
		$(DESTDIR)$(ITOOLSDIR)/hooks/drvbind \
		$(DESTDIR)$(ITOOLSDIR)/scripts/init-top/drvbind $(DESTDIR)$(DRACUTDIR)/module-setup.sh \
		$(DESTDIR)$(DRACUTDIR)/drvbind.sh
	chmod 644 $(DESTDIR)$(MANDIR)/man8/drvbind.8 $(DESTDIR)$(MANDIR)/man5/drvbind.conf.5 \
		$(DESTDIR)$(DATADIR)/modules.sh $(DESTDIR)$(CPIODIR)/install/drvbind \
		$(DESTDIR)$(CPIODIR)/hooks/drvbind $(DESTDIR)$(UNITDIR)/drvbind.service \
		$(DESTDIR)$(UNITDIR)/drvbind-follow.service $(DESTDIR)$(DATADIR)/inittab

# Exactly what install put there; of the directories only drvbind's own.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/drvbind $(DESTDIR)$(MANDIR)/man8/drvbind.8 \
		$(DESTDIR)$(MANDIR)/man5/drvbind.conf.5 $(DESTDIR)$(DATADIR)/modules.sh \
		$(DESTDIR)$(ITOOLSDIR)/hooks/drvbind $(DESTDIR)$(ITOOLSDIR)/scripts/init-top/drvbind \
		$(DESTDIR)$(DRACUTDIR)/module-setup.sh $(DESTDIR)$(DRACUTDIR)/drvbind.sh \
		$(DESTDIR)$(CPIODIR)/install/drvbind $(DESTDIR)$(CPIODIR)/hooks/drvbind \
		$(DESTDIR)$(UNITDIR)/drvbind.service $(DESTDIR)$(UNITDIR)/drvbind-follow.service \
		$(DESTDIR)$(DATADIR)/inittab $(DESTDIR)$(DATADIR)/runit/drvbind-follow/run
	rmdir $(DESTDIR)$(DATADIR)/runit/drvbind-follow $(DESTDIR)$(DATADIR)/runit \
		$(DESTDIR)$(DATADIR) $(DESTDIR)$(DRACUTDIR) 2>/dev/null || true

clean:
	rm -rf build

.PHONY: all initramfs size deps check check-asan check-ubsan check-cross fuzz bench print-cc print-nm demo demo-fake install uninstall clean
