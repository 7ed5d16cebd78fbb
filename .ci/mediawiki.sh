#!/usr/bin/env bash
# .ci/mediawiki.sh: a real MediaWiki 1.39 (Debian's `mediawiki` package, SQLite,
# PHP's built-in server on 127.0.0.1) loaded with the real Wikipedia dumps in
# tests/fixtures/wikitext/ (en and ru), for the tests that go through the
# `mediawiki` source: tests/integration/acquire/mediawiki_real.rs (library) and
# tests/integration/mediawiki_build.rs (the `collect` binary).
#
# Usage: .ci/mediawiki.sh [test|up|down]       (default: test)
#   up    install packages if missing (apt, needs root), set up en + ru wikis,
#         import the dumps, serve them; prints the two api.php URLs on stdout
#         as KEY=VALUE lines (logs go to stderr), e.g. for `export`
#   test  up, then COLLECT_MEDIAWIKI_URL=… COLLECT_MEDIAWIKI_RU_URL=… cargo test
#         --test integration acquire::mediawiki_real:: mediawiki_build::, then down
#         (also when the tests fail)
#   down  stop both servers
# Environment: MW_DIR (default ${TMPDIR:-/tmp}/collect-mediawiki), MW_EN_PORT
# (8091), MW_RU_PORT (8092), CARGO_FLAGS (extra `cargo test` flags, e.g.
# --offline). Set-up is idempotent; the first run takes about 2 minutes on
# 2 cores plus the apt install.
# All the heavy lifting is .ci/mediawiki-local.sh (the team's tested recipe,
# copied unchanged from shared/tools/mediawiki-local.sh). Nothing but 127.0.0.1
# and the Debian mirrors is contacted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
dir=${MW_DIR:-${TMPDIR:-/tmp}/collect-mediawiki}
en_port=${MW_EN_PORT:-8091}
ru_port=${MW_RU_PORT:-8092}
local_sh="$here/mediawiki-local.sh"
fx="$root/tests/fixtures/wikitext"
en_url="http://127.0.0.1:$en_port/w/api.php"
ru_url="http://127.0.0.1:$ru_port/w/api.php"

up() {
    # stdout is reserved for the KEY=VALUE lines callers parse.
    bash "$local_sh" up "$dir/en" --port "$en_port" --lang en "$fx/enwiki-2016-pages-articles-shortened.xml.bz2" >&2
    bash "$local_sh" up "$dir/ru" --port "$ru_port" --lang ru "$fx/ruwiki-2019-litva-truncated.xml.bz2" >&2
    echo "COLLECT_MEDIAWIKI_URL=$en_url"
    echo "COLLECT_MEDIAWIKI_RU_URL=$ru_url"
}

down() {
    bash "$local_sh" stop "$dir/en" || true
    bash "$local_sh" stop "$dir/ru" || true
}

case ${1:-test} in
    up) up ;;
    down) down ;;
    test)
        # Armed before `up` so that a half-finished set-up (one server started) is stopped too.
        trap down EXIT
        up
        cd "$root"
        # shellcheck disable=SC2086 # CARGO_FLAGS is a list of flags
        COLLECT_MEDIAWIKI_URL="$en_url" COLLECT_MEDIAWIKI_RU_URL="$ru_url" \
            cargo test ${CARGO_FLAGS:-} --test integration -- --nocapture acquire::mediawiki_real:: mediawiki_build::
        ;;
    *) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
