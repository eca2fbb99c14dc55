#!/bin/sh
# Build a Debian root holding a newer Erlang/OTP than Debian 12's OTP 25, for the differential
# tests (BPSPEC_OTP_ROOT=DIR; the tests run erl through `chroot DIR`, so they need root).
# Debian sid carries OTP 29 as of 2026-11 (erlang-base 1:29.1.2); if sid cannot be bootstrapped
# the script falls back to trixie (OTP 27). Takes about 30 s and 300 MB.
#   usage: scripts/otp-root.sh [DIR]   (default /opt/otp29)
set -eu
ROOT=${1:-/opt/otp29}
MIRROR=${BPSPEC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
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
