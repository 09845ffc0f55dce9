#!/bin/sh
# The naive peer: what a user would hack together instead of slopd.
#
#   sh bench/peer/peer.sh HUB
#
# watchdog's own `watchmedo shell-command` watches inbox/ and authorized/ and runs
# bench/peer/handler.py once per relevant event (created, moved, closed; waiting for each run,
# so two handlers never race on one file). Before that it hands every file already waiting to the
# handler, so a backlog is drained too. Environment: PYTHON (an interpreter with watchdog, PyYAML
# and cryptography; default python3), PEER_ALLOWED_SIGNERS and PEER_ACTION (see handler.py),
# PEER_POLLING=1 for watchdog's polling observer.
set -u
hub=$1
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
polling=
[ "${PEER_POLLING:-}" = 1 ] && polling=--debug-force-polling

"$python" -m watchdog.watchmedo shell-command \
    --patterns='**/*.md' --ignore-directories --wait $polling \
    --command='case "${watch_event_type}" in created|moved|closed) "'"$python"'" "'"$here"'/handler.py" "${watch_event_type}" "${watch_src_path}" "${watch_dest_path}";; esac' \
    "$hub/inbox" "$hub/authorized" &
watcher=$!
trap 'kill $watcher 2>/dev/null; exit 0' TERM INT
for file in "$hub"/inbox/*.md "$hub"/authorized/*.md; do
    [ -e "$file" ] && "$python" "$here/handler.py" created "$file" ""
done
wait $watcher
