#!/bin/bash
# Lines of the keepalive family (packages heartbeat, http2, mqtt, websocket, with heartbeat.internal,
# and netty/internal/{PingLoop,PingEnforcement,HeartbeatMeters} where they lived) at a git revision.
# usage: results/2026-11-28/handlers/famcount.sh REV
cd "$(git rev-parse --show-toplevel)" || exit 1
P=libraries/wheelbeat-netty/src/main/java/io/wheelbeat/netty
files=$(git ls-tree -r --name-only "$1" $P \
    | grep -E "$P/(heartbeat|http2|mqtt|websocket)/|$P/internal/(PingLoop|PingEnforcement|HeartbeatMeters)\.java")
all=$(for f in $files; do git show "$1:$f"; done)
echo "$(echo "$all" | wc -l) lines, $(echo "$all" | grep -v '^\s*$' | grep -cv '^\s*\(\*\|/\*\|//\)') code lines" \
     "(non-blank, not starting a comment line), $(echo $files | wc -w) files"
