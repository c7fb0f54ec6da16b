#!/bin/bash
# t-perms: with allow_other, another user gets exactly the access that mode bits and POSIX ACLs on the backing volume give.
set -euo pipefail
. "$srcdir/lib.sh"
require_root
require_cmd setpriv setfacl useradd

USER_NAME=dsfstest
if ! id -u "$USER_NAME" >/dev/null 2>&1; then
	useradd -M -r -s /usr/sbin/nologin "$USER_NAME" ||
		skip "cannot create the user $USER_NAME"
fi
USER_GID=$(id -g "$USER_NAME")

make_volume 300
SRC="$VOL/src"
MNT="$WORK/mnt"
mkdir "$SRC" "$MNT"
"$MKTREE" --file "$SRC/public" 1000 1
"$MKTREE" --file "$SRC/private" 1000 2
"$MKTREE" --file "$SRC/acl-denied" 1000 3
"$MKTREE" --file "$SRC/acl-granted" 1000 4
"$MKTREE" --file "$SRC/group-readable" 1000 5
mkdir "$SRC/closed" "$SRC/open"
"$MKTREE" --file "$SRC/closed/inner" 1000 6
"$MKTREE" --file "$SRC/open/inner" 1000 7
chmod 0644 "$SRC/public" "$SRC/acl-denied" "$SRC/open/inner"
chmod 0600 "$SRC/private" "$SRC/acl-granted"
chmod 0640 "$SRC/group-readable"
chgrp "$USER_GID" "$SRC/group-readable"
chmod 0700 "$SRC/closed"
setfacl -m "u:$USER_NAME:---" "$SRC/acl-denied"
setfacl -m "u:$USER_NAME:r--" "$SRC/acl-granted"

mount_dsfs "$SRC" "$MNT" -o allow_other

as_user() {
	setpriv --reuid="$USER_NAME" --regid="$USER_GID" --clear-groups -- "$@"
}

# check WANT DESC CMD ARGS... PATH: run CMD as the user on the backing path
# and on the mount path; both must give WANT ("ok" or "Permission denied").
check() {
	local want=$1 desc=$2 rel=${*: -1} rc out side p
	local -a cmd=("${@:3:$#-3}")

	for side in backing mount; do
		[[ $side == backing ]] && p="$SRC/$rel" || p="$MNT/$rel"
		say "checking $desc as $USER_NAME on the $side: $want"
		rc=0
		out=$(as_user "${cmd[@]}" "$p" 2>&1 >/dev/null) || rc=$?
		if [[ $want == ok ]]; then
			((rc == 0)) || fail "$desc on the $side: failed ($rc): $out"
		else
			((rc != 0)) || fail "$desc on the $side: succeeded, wanted '$want'"
			[[ $out == *"$want"* ]] ||
				fail "$desc on the $side: wanted '$want', got: $out"
		fi
	done
}

check ok "read a 0644 file" cat public
check ok "read a 0644 file in a 0755 directory" cat open/inner
check ok "list a 0755 directory" ls open
check "Permission denied" "read a 0600 root file" cat private
check "Permission denied" "read a 0644 file whose ACL denies the user" cat acl-denied
check ok "read a 0600 file whose ACL grants the user" cat acl-granted
check ok "read a 0640 file of the user's group" cat group-readable
check "Permission denied" "list a 0700 root directory" ls closed
check "Permission denied" "read a file in a 0700 root directory" cat closed/inner
check "Permission denied" "stat a file in a 0700 root directory" stat closed/inner

say "checking that the data the user reads is right"
[[ $(as_user cat "$MNT/acl-granted" | sha256sum) == $(sha256sum <"$SRC/acl-granted") ]] ||
	fail "content of acl-granted read by $USER_NAME differs"

unmount_dsfs "$MNT"
say "ok"
