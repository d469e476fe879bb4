# SPDX-License-Identifier: MIT
# Late driver, late device, and the native driver kept away meanwhile.
# The e1000s at 00:05.0 to 00:07.0, 00:0a.0 and 00:0b.0 have no driver
# when drvbind starts: the e1000 module is loaded 1 s later, pci-stub
# 3 s later, and the xhci host controller 5 s later, so the stick's
# interface appears while drvbind waits and usb-storage (already
# loaded) probes it just after its add event. Four drvbinds run side by side:
#   late     the command line: 00:05.0 -> pci-stub, 2-1:1.0 -> none
#   bg       drvbind -b -t 30 0000:00:06.0:pci-stub, must return at once
#   expire   drvbind -t 4 0000:00:07.0:vfio-pci, a driver that never
#            comes: at the deadline the device goes back to e1000
#   pair     drvbind 0000:00:0a.0:pci-stub 0000:00:0b.0:pci-stub, two
#            functions held for one driver, as a GPU and its audio
#            function are for vfio-pci
# The ones with argument rules have modprobe off, so the one request of
# `late` can be counted.

# beside NAME ARG...: drvbind ARG... in the background beside `late`, on
# its own clock from t0, as it may end while `late` still runs; expire
# and pair are two of these.
beside() {
	local name="$1"
	shift
	(
		drvbind "$@" 2>"/tmp/$name.err"
		echo "$? $(($(now_ms) - t0))" >"/tmp/$name.end"
	) &
	echo $! >"/tmp/$name.pid"
}

# report_beside NAME: once the run beside has ended, its exit status, its
# time and its messages, as finish reports them for `late`.
report_beside() {
	local st ms
	wait "$(cat "/tmp/$1.pid")"
	read -r st ms <"/tmp/$1.end"
	say "$1.status $st"
	say "$1.ms $ms"
	say_lines "$1.stderr " <"/tmp/$1.err"
}

load usb-storage
start late -v

t0=$(now_ms)
drvbind -b -v -t 30 -m '' 0000:00:06.0:pci-stub 2>/tmp/bg.err
say "bg.status $?"
say "bg.ms $(($(now_ms) - t0))"

beside expire -t 4 -v -m '' 0000:00:07.0:vfio-pci
beside pair -t 10 -v -m '' 0000:00:0a.0:pci-stub 0000:00:0b.0:pci-stub

sleep 1
say "late.e1000_ms $(($(now_ms) - run_t0))"
load e1000
sleep 2
for d in 05 06 07 0a 0b; do
	link held pci 0000:00:$d.0
done
say "late.pcistub_ms $(($(now_ms) - run_t0))"
load pci-stub
sleep 2
say "late.xhci_ms $(($(now_ms) - run_t0))"
load xhci-pci
finish
link late pci 0000:00:05.0
link late usb 2-1:1.0

report_beside expire
link expire pci 0000:00:07.0

report_beside pair
link pair pci 0000:00:0a.0
link pair pci 0000:00:0b.0

# The background child ends once its rule is settled (5 s at most here).
i=0
while pidof drvbind >/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
say "bg.child $(pidof drvbind >/dev/null && echo running || echo gone)"
say_lines "bg.stderr " </tmp/bg.err
link bg pci 0000:00:06.0
