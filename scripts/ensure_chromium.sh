#!/usr/bin/env sh
# Browser tests drive Debian's chromium through Playwright (no browser download: no internet).
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests…"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; browser tests will be skipped outside CI" >&2
else
  echo "warning: /usr/bin/chromium missing (install Debian's 'chromium'); browser tests will be skipped" >&2
fi
exit 0
