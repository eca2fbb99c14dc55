#!/bin/sh
# Build a Debian root holding a newer Erlang/OTP than Debian 12's OTP 25, for the differential
# tests (BPSPEC_OTP_ROOT=DIR; the tests run erl through `chroot DIR`, so they need root).
# Debian sid carries OTP 29 as of 2026-11 (erlang-base 1:29.1.2); if sid cannot be bootstrapped
# the script falls back to trixie (OTP 27). Takes about 30 s and 300 MB.
#   usage: scripts/otp-root.sh [DIR]   (default /opt/otp29)
set -eu
ROOT=${1:-/opt/otp29}
# The Debian mirror is the machine's own: the first main archive in its apt sources (deb822
# *.sources or one-line sources.list), unless BPSPEC_DEBIAN_MIRROR names one.
apt_mirror() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:/) { if ($i !~ /security/) print $i; break } }' "$f"
    done
}
MIRROR=${BPSPEC_DEBIAN_MIRROR:-$(apt_mirror | head -n 1)}
if [ -z "$MIRROR" ]; then
    echo "otp-root.sh: no Debian mirror in /etc/apt (set BPSPEC_DEBIAN_MIRROR)" >&2
    exit 2
fi
probe() {
    chroot "$ROOT" erl -noshell -eval 'io:format("OTP ~s~n", [erlang:system_info(otp_release)]), halt().' 2>/dev/null
}
if [ -x "$ROOT/usr/bin/erl" ] && probe; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "otp-root.sh: must run as root (debootstrap and chroot)" >&2
    exit 2
fi
command -v debootstrap >/dev/null || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
}
for suite in ${BPSPEC_OTP_SUITES:-sid trixie}; do
    rm -rf "$ROOT"
    if debootstrap --variant=minbase --include=erlang-base "$suite" "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1; then
        probe && exit 0
    fi
    echo "otp-root.sh: debootstrap of $suite failed; see $ROOT.log" >&2
done
exit 1
