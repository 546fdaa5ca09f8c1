#!/bin/bash
# A real mail stack on loopback for pbm's tests: Postfix (SMTP) delivers over LMTP to Dovecot
# (IMAP). Everything lives under $MS; nothing in /etc is used. Run as root on Debian 12.
#
#   mailstack.sh start          install the packages when missing, write configs, start (idempotent)
#   mailstack.sh stop           stop both daemons of this $MS (idempotent)
#   mailstack.sh restart-imap   restart Dovecot only      mailstack.sh restart-smtp   Postfix only
#   mailstack.sh adduser NAME [PASS]   add a mailbox (effective at once)
#   mailstack.sh status         exit 0 when both daemons of this $MS run
#
# Environment: MS (state dir, default /tmp/pbm-mailstack), SMTP_PORT (10025), IMAP_PORT (10143),
# LMTP_PORT (10024, Dovecot's), DOMAINS ("example.test"), USERS ("pbm alice bob carol", password
# "secret"), PBM_LMTP_PORT (optional: mail for pbm-lmtp@<first domain> goes to pbm's own LMTP
# listener on that port), PIPE_CMD (optional: absolute path of a command that gets mail for
# pbm-pipe@<first domain> on stdin, as user vmail, with argv "sender recipient").
set -euo pipefail
MS=${MS:-/tmp/pbm-mailstack}
SMTP_PORT=${SMTP_PORT:-10025}
IMAP_PORT=${IMAP_PORT:-10143}
LMTP_PORT=${LMTP_PORT:-10024}
DOMAINS=${DOMAINS:-example.test}
D1=${DOMAINS%% *}
USERS=${USERS:-pbm alice bob carol}
PBM_LMTP_PORT=${PBM_LMTP_PORT:-}
PIPE_CMD=${PIPE_CMD:-}
DOVECOT_CONF=$MS/dovecot/dovecot.conf
POSTFIX_ETC=$MS/postfix/etc

log() { echo "mailstack: $*" >&2; }

install_packages() {
  if command -v dovecot >/dev/null && command -v postfix >/dev/null \
    && [ -x /usr/lib/dovecot/lmtp ] && [ -x /usr/lib/dovecot/imap ]; then
    return 0
  fi
  [ "$(id -u)" = 0 ] || { log "Postfix/Dovecot missing and not root: cannot install them"; return 1; }
  # answers the postfix dialog up front; leaves /etc/postfix/main.cf absent (never used here)
  echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    dovecot-imapd dovecot-lmtpd postfix >/dev/null
}

pid_alive() { [ -f "$1" ] && kill -0 "$(tr -dc 0-9 <"$1")" 2>/dev/null; }
dovecot_running() { pid_alive "$MS/dovecot/run/master.pid"; }
postfix_running() { pid_alive "$MS/postfix/spool/pid/master.pid"; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  for _ in $(seq 1 200); do port_open "$1" && return 0; sleep 0.05; done
  log "port $1 did not open"
  return 1
}

write_dovecot() {
  mkdir -p "$MS/dovecot" "$MS/mail"
  chown vmail:vmail "$MS/mail"
  touch "$MS/dovecot/users"
  cat >"$DOVECOT_CONF" <<CONF
instance_name = pbm-test-$IMAP_PORT
base_dir = $MS/dovecot/run
state_dir = $MS/dovecot/state
log_path = $MS/dovecot/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# "alice@example.test" (LMTP recipient or IMAP login) is user "alice"
auth_username_format = %Ln
# pbm+TOKEN@example.test is delivered to user "pbm" (the token stays in the headers)
recipient_delimiter = +
# vmail is a system user (uid < 500)
first_valid_uid = 100
mail_uid = vmail
mail_gid = vmail
# sdbox: index-based, so new mail is seen at once (Maildir rescans hinge on 1 s mtimes)
mail_location = sdbox:$MS/mail/%n/sdbox
passdb {
  driver = passwd-file
  args = scheme=PLAIN $MS/dovecot/users
}
userdb {
  driver = static
  args = home=$MS/mail/%n
}
namespace inbox {
  inbox = yes
  separator = /
  # where pbm files handled mail; created for every user on first login
  mailbox Processed {
    auto = subscribe
  }
}
service imap-login {
  inet_listener imap {
    port = $IMAP_PORT
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    port = $LMTP_PORT
  }
}
protocol lmtp {
  postmaster_address = postmaster@$D1
}
CONF
}

write_postfix() {
  mkdir -p "$POSTFIX_ETC" "$MS/postfix/spool" "$MS/postfix/data"
  chown postfix "$MS/postfix/data"
  cat >"$POSTFIX_ETC/main.cf" <<CONF
compatibility_level = 3.6
queue_directory = $MS/postfix/spool
data_directory = $MS/postfix/data
# no syslog in containers: postlogd writes this file (its prefix must be allowed explicitly)
maillog_file = $MS/postfix/postfix.log
maillog_file_prefixes = $MS
myhostname = mail.$D1
mydomain = $D1
myorigin = $D1
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
smtpd_banner = \$myhostname ESMTP pbm-test
virtual_mailbox_domains = $DOMAINS
virtual_transport = lmtp:inet:127.0.0.1:$LMTP_PORT
relay_transport = error:no relaying in tests
default_transport = error:no outbound mail in tests
mydestination = pipe.$D1
alias_maps = texthash:$POSTFIX_ETC/aliases
alias_database =
local_recipient_maps =
transport_maps = texthash:$POSTFIX_ETC/transport
pbmpipe_destination_recipient_limit = 1
default_privs = vmail
biff = no
delay_warning_time = 0
# tests restart servers: retry deferred mail within seconds, not minutes
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 5s
lmtp_connection_cache_on_demand = yes
CONF
  cat >"$POSTFIX_ETC/master.cf" <<CONF
127.0.0.1:$SMTP_PORT inet n - n - - smtpd
pickup    unix n - n 60 1 pickup
cleanup   unix n - n - 0  cleanup
qmgr      unix n - n 300 1 qmgr
rewrite   unix - - n - - trivial-rewrite
bounce    unix - - n - 0 bounce
defer     unix - - n - 0 bounce
trace     unix - - n - 0 bounce
verify    unix - - n - 1 verify
flush     unix n - n 1000? 0 flush
proxymap  unix - - n - - proxymap
showq     unix n - n - - showq
error     unix - - n - - error
retry     unix - - n - - error
discard   unix - - n - - discard
lmtp      unix - - n - - lmtp
local     unix - n n - - local
anvil     unix - - n - 1 anvil
scache    unix - - n - 1 scache
postlog   unix-dgram n - n - 1 postlogd
pbmpipe   unix - n n - - pipe flags=DRq user=vmail argv=${PIPE_CMD:-/bin/false} \${sender} \${recipient}
CONF
  # texthash tables are "key value", never "key: value" (even aliases); no postmap step needed
  : >"$POSTFIX_ETC/transport"
  : >"$POSTFIX_ETC/aliases"
  if [ -n "$PIPE_CMD" ]; then
    echo "pbm-pipe@$D1 pbmpipe:" >>"$POSTFIX_ETC/transport"
    echo "pbm \"|$PIPE_CMD\"" >>"$POSTFIX_ETC/aliases"
  fi
  if [ -n "$PBM_LMTP_PORT" ]; then
    echo "pbm-lmtp@$D1 lmtp:inet:127.0.0.1:$PBM_LMTP_PORT" >>"$POSTFIX_ETC/transport"
  fi
}

adduser() { # adduser NAME [PASS]: the passwd-file is re-read per login, no reload needed
  local name=$1 pass=${2:-secret}
  mkdir -p "$MS/dovecot"
  touch "$MS/dovecot/users"
  grep -q "^$name:" "$MS/dovecot/users" || echo "$name:{PLAIN}$pass::::::" >>"$MS/dovecot/users"
}

start_dovecot() {
  # stdio to a file: dovecot keeps an inherited stderr open forever (hangs pipes and CI logs)
  dovecot -c "$DOVECOT_CONF" </dev/null >>"$MS/dovecot/start.err" 2>&1 \
    || { cat "$MS/dovecot/start.err" >&2; return 1; }
  wait_port "$IMAP_PORT"
  wait_port "$LMTP_PORT"
}

start_postfix() {
  # postfix reports fatal errors only to a tty or syslog: show them via script(1)'s tty
  postfix -c "$POSTFIX_ETC" start </dev/null >>"$MS/postfix/start.err" 2>&1 || {
    script -qec "postfix -c $POSTFIX_ETC check" /dev/null >&2
    return 1
  }
  wait_port "$SMTP_PORT"
}

stop_dovecot() {
  if dovecot_running; then
    doveadm -c "$DOVECOT_CONF" stop </dev/null >/dev/null 2>&1 || true
    for _ in $(seq 1 200); do dovecot_running || break; sleep 0.05; done
  fi
  # IMAP sessions outlive `doveadm stop`; a stopped server must drop its clients too.
  # Only this instance's processes: their title is "dovecot-<instance_name>/..."
  local pids
  pids=$(pgrep -f "^dovecot-pbm-test-$IMAP_PORT/" || true)
  [ -z "$pids" ] || kill $pids 2>/dev/null || true
}

stop_postfix() {
  postfix_running || return 0
  postfix -c "$POSTFIX_ETC" stop </dev/null >/dev/null 2>&1 || true
  for _ in $(seq 1 200); do postfix_running || return 0; sleep 0.05; done
}

stop() { # in parallel: dovecot needs a few seconds to wind down
  stop_postfix &
  stop_dovecot &
  wait
}

start() {
  if dovecot_running && postfix_running; then
    log "already running in $MS"
    return 0
  fi
  stop
  # postfix binds with SO_REUSEPORT: a stale server on one of our ports would silently share it
  for p in "$SMTP_PORT" "$IMAP_PORT" "$LMTP_PORT"; do
    if port_open "$p"; then
      log "port $p is already in use by another program"
      return 1
    fi
  done
  install_packages
  id vmail >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin vmail
  mkdir -p "$MS"
  chmod 755 "$MS"
  # the daemons run as postfix/vmail/dovenull: every parent of $MS must be traversable for them
  runuser -u postfix -- test -x "$MS" || {
    log "$MS is not reachable by user postfix (a 0700 parent such as pytest's tmp_path?)"
    return 1
  }
  write_dovecot
  write_postfix
  for u in $USERS; do adduser "$u"; done
  start_dovecot
  start_postfix
}

case "${1:-}" in
  start)
    # a failed start must not leave half a stack running
    trap '[ "${started:-}" = 1 ] || { log "start failed, stopping"; stop; }' EXIT
    start
    started=1
    ;;
  stop) stop ;;
  restart-imap)
    stop_dovecot
    start_dovecot
    ;;
  restart-smtp)
    stop_postfix
    start_postfix
    ;;
  adduser)
    shift
    adduser "$@"
    ;;
  status) dovecot_running && postfix_running ;;
  *)
    echo "usage: $0 start|stop|restart-imap|restart-smtp|status|adduser NAME [PASS]" >&2
    exit 2
    ;;
esac
