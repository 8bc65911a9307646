#!/usr/bin/env bash
# Makes sure what the tests use is there: the stores answer on loopback (Redis 6379, PostgreSQL 5432 with
# trust auth and database `test`, Memcached 11211), and Debian's Chromium (/usr/bin/chromium) and HAProxy are
# installed. Starts whichever store is not running; installs a missing one, Chromium and HAProxy from Debian's
# packages (root or sudo; one apt-get update per run, only when something is missing). Safe to run repeatedly.
# Usage: scripts/start-services.sh
set -euo pipefail

log() { printf 'start-services: %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  local name=$1 port=$2 tries=${3:-60}
  for ((i = 0; i < tries; i++)); do
    if port_open "$port"; then log "$name is up on 127.0.0.1:$port"; return 0; fi
    sleep 0.5
  done
  log "$name did not come up on 127.0.0.1:$port"
  return 1
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root for: $*"; return 1
  fi
}

apt_install() {
  if [ -z "${APT_UPDATED:-}" ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    APT_UPDATED=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Memcached
if ! port_open 11211; then
  command -v memcached >/dev/null || apt_install memcached
  log "starting memcached"
  as_root memcached -d -u memcache -l 127.0.0.1 -p 11211 -m 64 -U 0 || as_root memcached -d -u root -l 127.0.0.1 -p 11211 -m 64 -U 0
fi
wait_port memcached 11211

# Redis
if ! port_open 6379; then
  command -v redis-server >/dev/null || apt_install redis-server
  as_root mkdir -p /var/lib/redis /var/log/redis
  log "starting redis"
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi
wait_port redis 6379

# PostgreSQL
if ! port_open 5432; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then apt_install postgresql; fi
  log "starting postgresql"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n1)" main start
fi
wait_port postgresql 5432
# The tests connect as postgres without a password to database `test`.
if command -v psql >/dev/null; then
  if ! psql -h 127.0.0.1 -U postgres -d postgres -Atc "select 1 from pg_database where datname = 'test'" 2>/dev/null | grep -q 1; then
    log "creating database test"
    psql -h 127.0.0.1 -U postgres -d postgres -c 'create database test' >/dev/null || log "could not create database test"
  fi
fi

# HAProxy for the rolling-restart test (test/rolling-restart.e2e-spec.ts starts its own on loopback).
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
  log "installing haproxy"
  apt_install haproxy
fi

# Chromium for the Swagger UI browser test (test/openapi-browser.e2e-spec.ts launches /usr/bin/chromium
# through playwright-core, which downloads no browser of its own).
if [ ! -x /usr/bin/chromium ]; then
  log "installing chromium"
  apt_install chromium
fi
